/** A problem with what the user asked for: the CLI prints it as one clear line, exit code 2. */
export class CliError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CliError';
  }
}

/**
 * Errors of the local runtime and the CLI commands built on it. Each names what a person has to
 * fix; none carries a secret value or a full phone number. Callers print them and stop, so one
 * class carries them all; only a taken port is told apart (`sms-relay console` suggests `--port`).
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

/** Another process listens on the port the runtime was asked to use. */
export class PortInUseError extends RuntimeError {
  public readonly port: number;

  public constructor(port: number, options?: ErrorOptions) {
    super(`port ${port} is in use; set PORT to another port (PORT=0 picks a free one)`, options);
    this.name = 'PortInUseError';
    this.port = port;
  }
}

/**
 * An environment variable or option that cannot be used (`PORT=abc`, `MAX_BODY_BYTES=-1`).
 *
 * @example
 * ```ts
 * throw invalidSetting('PORT', 'expected a port from 0 to 65535, got "abc"'); // "PORT: expected a port…"
 * ```
 */
export function invalidSetting(setting: string, problem: string, options?: ErrorOptions): RuntimeError {
  return new RuntimeError(`${setting}: ${problem}`, options);
}

/**
 * The message for a problem with the secrets file at `path`. Never quotes a value from it.
 *
 * @example
 * ```ts
 * throw new RuntimeError(secretsFileProblem(path, 'cannot write it (EACCES)'));
 * ```
 */
export function secretsFileProblem(path: string, problem: string): string {
  return `secrets file ${path}: ${problem}`;
}
