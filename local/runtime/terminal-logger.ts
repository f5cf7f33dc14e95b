import { createLogger, maskingReplacer, relayLogger } from '../../functions/adapters/logger';
import type { RelayLogger } from '../../functions/relay/ports';
import { formatLogEntry, type LogEntry } from './log-format';
import type { Terminal } from './terminal';

export interface TerminalLoggerOptions {
  /**
   * Also print INFO lines that have no line format of their own.
   * @default false
   */
  readonly verbose?: boolean;
  /**
   * Print the JSON lines the Lambda handlers write (Powertools), instead of human lines.
   * @default false
   */
  readonly json?: boolean;
}

/**
 * The relay's logger on a terminal: each line the relay operations log becomes one human line
 * (`03:30:37  sms  notify  SENT  to 2557****678 ...`), masked the way the Lambda logger masks it;
 * errors go to stderr. With `json`, the Lambda handlers' own JSON lines.
 *
 * @example
 * ```ts
 * const logger = createTerminalLogger(terminal, { verbose: false });
 * logger.info('sms', { route: 'notify', state: 'SENT', to: ['2557****678'], segments: 1 });
 * ```
 */
export function createTerminalLogger(
  terminal: Terminal,
  { verbose = false, json = false }: TerminalLoggerOptions = {},
): RelayLogger {
  if (json) return relayLogger(createLogger());
  const write =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (message: string, attributes: Record<string, unknown> = {}): void => {
      const entry = JSON.parse(
        JSON.stringify(
          { ...attributes, level: level.toUpperCase(), message, timestamp: new Date().toISOString() },
          errorsAsText,
        ),
      ) as LogEntry;
      const line = formatLogEntry(entry, { verbose });
      if (line === undefined) return;
      (level === 'error' ? terminal.printError : terminal.print)(line);
    };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

/** The Lambda logger's masking, plus errors as their name, code and message (a stack is no use on a terminal line). */
function errorsAsText(key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const { code } = value as { code?: unknown };
    return {
      name: value.name,
      message: maskingReplacer('message', value.message),
      ...(typeof code === 'string' ? { code } : {}),
    };
  }
  return maskingReplacer(key, value);
}
