import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from './errors';
import { ConfigSchema, type RelayConfig } from './schema';

/**
 * Parses and validates the YAML text of `config/<env>.yaml`. Templates are not compiled here
 * (see `loadConfig`); every schema problem is reported at once, each with its field path.
 *
 * @example
 * ```ts
 * const config = parseConfig(readFileSync('config/prod.yaml', 'utf8'), 'config/prod.yaml');
 * ```
 */
export function parseConfig(text: string, source = 'config'): RelayConfig {
  const result = ConfigSchema.safeParse(readYaml(text, source));
  if (!result.success) throw new ConfigError(source, describeIssues(result.error.issues), { cause: result.error });
  return result.data;
}

/** The YAML document as plain data; a syntax error is a `ConfigError` naming the line. */
export function readYaml(text: string, source = 'config'): unknown {
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    throw new ConfigError(
      source,
      document.errors.map((error) => `YAML: ${error.message.split('\n')[0]}`),
      { cause: document.errors[0] },
    );
  }
  return document.toJS();
}

export function describeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => `${formatPath(issue.path) || '(top level)'}: ${describeIssue(issue)}`);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown option${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
  if (issue.code === 'invalid_type' && issue.input === undefined) return 'is required';
  if (issue.code === 'invalid_key') return issue.issues.map((inner) => inner.message).join('; ');
  return issue.message;
}

export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    return text === '' ? String(key) : `${text}.${String(key)}`;
  }, '');
}
