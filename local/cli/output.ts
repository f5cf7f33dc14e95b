import { ConfigError } from '../../functions/core/config/errors';
import { CliError } from '../shared/errors';

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
