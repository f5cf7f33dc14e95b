import { ConfigError } from '../../functions/core/config/errors';

/** A problem with what the user asked for: printed as one clear line, exit code 2. */
export class CliError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CliError';
  }
}

/** Prints an error the way a person wants to read it, and exits non-zero. */
export function fail(error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  if (error instanceof CliError) {
    process.stderr.write(`error: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
