/**
 * Errors of the local runtime and the CLI commands built on it. Each names what a person has to
 * fix; none carries a secret value or a full phone number.
 *
 * @example
 * ```ts
 * try { await startRuntime(settings); } catch (error) { if (error instanceof PortInUseError) console.error(error.message); }
 * ```
 */
export class RuntimeError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RuntimeError';
  }
}

/** An environment variable or option that cannot be used (`PORT=abc`, `MAX_BODY_BYTES=-1`). */
export class InvalidSettingError extends RuntimeError {
  public readonly setting: string;

  public constructor(setting: string, problem: string, options?: ErrorOptions) {
    super(`${setting}: ${problem}`, options);
    this.name = 'InvalidSettingError';
    this.setting = setting;
  }
}

/** Another process listens on the port the runtime was asked to use. */
export class PortInUseError extends RuntimeError {
  public readonly port: number;

  public constructor(port: number, options?: ErrorOptions) {
    super(`port ${port} is in use; set PORT to another port (PORT=0 picks a free one)`, options);
    this.name = 'PortInUseError';
    this.port = port;
  }
}

/** The secrets file cannot be read, parsed or written. Never quotes a value from it. */
export class SecretsFileError extends RuntimeError {
  public readonly path: string;

  /** `message` names the file; see {@link secretsFileProblem}. */
  public constructor(path: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SecretsFileError';
    this.path = path;
  }
}

/**
 * The message for a problem with the secrets file at `path`.
 *
 * @example
 * ```ts
 * throw new SecretsFileError(path, secretsFileProblem(path, 'cannot write it (EACCES)'));
 * ```
 */
export function secretsFileProblem(path: string, problem: string): string {
  return `secrets file ${path}: ${problem}`;
}

/** The on-disk store is held by another process: LevelDB allows one at a time. */
export class DataDirLockedError extends RuntimeError {
  public readonly dataDir: string;

  public constructor(dataDir: string, options?: ErrorOptions) {
    super(
      `the store in ${dataDir} is in use by another process (is another "sms-relay start" running on it? ` +
        'stop it, or set RELAY_DATA_DIR to another directory)',
      options,
    );
    this.name = 'DataDirLockedError';
    this.dataDir = dataDir;
  }
}

/** A handler module under `functions/handlers/` is missing, fails to load, or exports no `handler`. */
export class HandlerLoadError extends RuntimeError {
  public readonly handler: string;

  public constructor(handler: string, problem: string, options?: ErrorOptions) {
    super(`handler functions/handlers/${handler}.ts ${problem}`, options);
    this.name = 'HandlerLoadError';
    this.handler = handler;
  }
}

/** A running runtime answered a local-only request with an error, or could not be reached. */
export class RuntimeRequestError extends RuntimeError {
  public readonly status: number | undefined;

  public constructor(message: string, { status, cause }: { readonly status?: number; readonly cause?: unknown } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'RuntimeRequestError';
    this.status = status;
  }
}

/** `send-test` was asked to sign for a source no signer knows. */
export class UnknownSourceError extends RuntimeError {
  public readonly source: string;

  public constructor(source: string, known: readonly string[]) {
    super(`no signer for source "${source}"; known sources: ${known.join(', ')}`);
    this.name = 'UnknownSourceError';
    this.source = source;
  }
}
