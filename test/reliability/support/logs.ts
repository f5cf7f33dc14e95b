import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where every child process of this run writes its captured stdout+stderr (global setup). */
    reliabilityLogDir: string;
  }
}

let fallbackDir: string | undefined;

/**
 * The directory shared by all test files of one run (made by the global setup), where each child
 * process's output is kept for the leak check. Outside the global setup (a file run on its own with
 * another config) a private directory is used.
 */
export function logDir(): string {
  let dir: string | undefined;
  try {
    dir = inject('reliabilityLogDir');
  } catch {
    dir = undefined;
  }
  if (dir === undefined || dir === '') {
    fallbackDir ??= join(tmpdir(), `sms-relay-reliability-logs-${process.pid}`);
    dir = fallbackDir;
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Appends a chunk of a child's output to its log file. */
export function appendLog(file: string, chunk: string): void {
  appendFileSync(join(logDir(), file), chunk);
}

/** Every captured output of this run so far: file name → text. */
export function allLogs(): ReadonlyMap<string, string> {
  const dir = logDir();
  const logs = new Map<string, string>();
  for (const name of readdirSync(dir).sort()) {
    if (name.endsWith('.log')) logs.set(name, readFileSync(join(dir, name), 'utf8'));
  }
  return logs;
}

/** Secret values to look for; added by whoever writes a secrets file or starts a sandbox. */
const SECRET_REGISTRY = 'secrets.registry';

export function registerSecrets(values: Iterable<string>): void {
  const lines = [...values].filter((value) => value.length >= 8).map((value) => JSON.stringify(value));
  if (lines.length > 0) appendFileSync(join(logDir(), SECRET_REGISTRY), `${lines.join('\n')}\n`);
}

export function registeredSecrets(): readonly string[] {
  let text = '';
  try {
    text = readFileSync(join(logDir(), SECRET_REGISTRY), 'utf8');
  } catch {
    return [];
  }
  return [
    ...new Set(
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as string),
    ),
  ];
}

/**
 * Full phone numbers in the forms the relay handles: `255XXXXXXXXX`, `+255 XXX XXX XXX` (any of
 * the separators), and national `06…`/`07…`. Bounded by non-alphanumerics, so digit runs inside
 * ids (Crockford base32) or hex hashes are not taken for numbers; masked forms (`2557****678`) never match.
 */
const PHONE_NUMBER =
  /(?<![0-9A-Za-z])(?:\+?255[ -]?\d{3}[ -]?\d{3}[ -]?\d{3}|0[67]\d{2}[ -]?\d{3}[ -]?\d{3})(?![0-9A-Za-z])/g;

export interface Leak {
  readonly file: string;
  readonly line: number;
  readonly kind: 'secret' | 'phone';
  /** The offending line with the leaked value replaced, so the report itself does not leak. */
  readonly excerpt: string;
}

/**
 * Scans log text for secret values (exact substrings) and full phone numbers.
 *
 * @example
 * ```ts
 * expect(findLeaks(allLogs(), registeredSecrets())).toEqual([]);
 * ```
 */
export function findLeaks(logs: ReadonlyMap<string, string>, secrets: readonly string[]): Leak[] {
  const leaks: Leak[] = [];
  for (const [file, text] of logs) {
    text.split('\n').forEach((content, index) => {
      for (const secret of secrets) {
        if (content.includes(secret)) {
          leaks.push({
            file,
            line: index + 1,
            kind: 'secret',
            excerpt: content.split(secret).join('<SECRET>').slice(0, 300),
          });
        }
      }
      const phones = content.match(PHONE_NUMBER);
      if (phones !== null) {
        leaks.push({
          file,
          line: index + 1,
          kind: 'phone',
          excerpt: content.replace(PHONE_NUMBER, (match) => `<PHONE ${match.slice(0, 4)}…>`).slice(0, 300),
        });
      }
    });
  }
  return leaks;
}
