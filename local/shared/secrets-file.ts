import { readFileSync } from 'node:fs';
import { CliError } from './errors';

/**
 * Reads a local secrets file: a JSON object of names to values (`providerApiKey` and each route's
 * secret). Errors name the file and the problem, never a value.
 */
export function readSecretsFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read secrets file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, {
      cause: error,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`secrets file ${path} is not valid JSON`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CliError(`secrets file ${path} must hold a JSON object of names to string values`);
  }
  const entries = Object.entries(parsed as Record<string, unknown>);
  const notText = entries.filter(([, value]) => typeof value !== 'string').map(([name]) => name);
  if (notText.length > 0) throw new CliError(`secrets file ${path}: values must be strings (${notText.join(', ')})`);
  return Object.fromEntries(entries) as Record<string, string>;
}
