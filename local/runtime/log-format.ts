import { maskNumbersInText } from '../../functions/core/recipients';
import { currentReason, reasonText } from '../../functions/core/reasons';
import { formatTime, terminalClock } from '../../functions/core/time-format';
import type { WebhookReport } from './server';

/** Powertools Logger's own keys; everything else in a line is the caller's attributes. */
const STANDARD_KEYS = new Set([
  'level',
  'message',
  'timestamp',
  'service',
  'sampling_rate',
  'xray_trace_id',
  'cold_start',
  'function_arn',
  'function_memory_size',
  'function_name',
  'function_request_id',
  'correlation_id',
]);

/** Secrets shorter than this are not searched for: they would match ordinary words. */
const MIN_REDACTED_LENGTH = 6;
const MAX_ATTRIBUTES_LENGTH = 300;

/**
 * Builds the filter every printed line goes through: each secret value becomes `[redacted]` and
 * every phone number is masked, whatever printed it (a handler, a library, the runtime).
 *
 * @example
 * ```ts
 * const redact = createRedactor(['s3cret-token']);
 * redact('token s3cret-token for 255712345678'); // 'token [redacted] for 2557****678'
 * ```
 */
export function createRedactor(secrets: Iterable<string>): (text: string) => string {
  // Longest first, so a secret containing another is replaced whole.
  const values = [...new Set(secrets)]
    .filter((value) => value.length >= MIN_REDACTED_LENGTH)
    .sort((a, b) => b.length - a.length);
  return (text) => maskNumbersInText(values.reduce((line, value) => line.split(value).join('[redacted]'), text));
}

/** A parsed Powertools JSON log line. */
export type LogEntry = Readonly<Record<string, unknown>> & { readonly level: string; readonly message: string };

export interface FormatOptions {
  /**
   * Also show INFO lines the runtime has no special format for.
   * @default false
   */
  readonly verbose?: boolean;
}

/**
 * One human line for a handler's log entry, or `undefined` to leave it out: a send becomes
 * `sms  <route>  SENT  to 2557****678 via main  1 segment  20 credits, balance 9980`; webhook entries are
 * left to the runtime's own line per request; other entries show at WARN and above (all with
 * `verbose`).
 *
 * @example
 * ```ts
 * formatLogEntry({ level: 'INFO', message: 'sms', route: 'notify', state: 'SENT', to: ['2557****678'], segments: 1, credits: 20, remainingBalance: 9980 });
 * ```
 */
export function formatLogEntry(entry: LogEntry, { verbose = false }: FormatOptions = {}): string | undefined {
  const time = clock(entry['timestamp']);
  const level = entry.level.toUpperCase();
  const serious = level === 'WARN' || level === 'ERROR' || level === 'CRITICAL';
  if (entry.message === 'sms') return `${time}  sms      ${describeSend(entry)}`;
  if (entry.message === 'balance') return `${time}  balance  ${describeBalance(entry)}`;
  if (entry.message === 'circuit') return `${time}  service  ${describeCircuit(entry)}`;
  if (entry.message === 'balance below threshold') return `${time}  balance  ${describeLowBalance(entry)}`;
  if (entry.message === 'incident escalated' || entry.message === 'incident renotified')
    return `${time}  page     ${describeStep(entry)}`;
  // The runtime prints its own line per webhook with the HTTP status; ingest's lines would repeat it.
  if (entry.message.startsWith('webhook ') && level !== 'ERROR' && level !== 'CRITICAL')
    return verbose ? generic(time, level, entry) : undefined;
  if (!serious && !verbose) return undefined;
  return generic(time, level, entry);
}

/**
 * The runtime's line for one webhook.
 *
 * @example
 * ```ts
 * formatWebhook({ route: 'notify', status: 202, outcome: 'accepted', reason: undefined, ids: ['01J…'] });
 * // '12:00:01  webhook  notify      202 accepted: 1 SMS queued'
 * ```
 */
export function formatWebhook({ route, status, outcome, reason, ids }: WebhookReport, at: Date = new Date()): string {
  let detail: string;
  if (status === 202 && !outcome?.startsWith('api')) detail = `accepted: ${ids.length} SMS queued`;
  else if (outcome === 'duplicate') detail = 'duplicate: already received, nothing sent';
  else detail = [outcome ?? statusText(status), reason].filter((part) => part !== undefined && part !== '').join(': ');
  return `${clock(at.toISOString())}  webhook  ${route.padEnd(10)}  ${status} ${detail}`;
}

function describeSend(entry: LogEntry): string {
  const route = text(entry['route']) ?? '?';
  const state = text(entry['state']) ?? '?';
  const to = Array.isArray(entry['to']) ? entry['to'].map(String).join(', ') : '?';
  const segments = typeof entry['segments'] === 'number' ? entry['segments'] : undefined;
  const parts = [`${route.padEnd(10)}  ${state.padEnd(7)} to ${to}${via(entry)}`];
  if (segments !== undefined) parts.push(`${segments} segment${segments === 1 ? '' : 's'}`);
  const error = entry['error'] as Record<string, unknown> | undefined;
  // The code names the failure (`refused`, `timeout`…); older lines carried it in the error's name.
  const errorText =
    error === undefined
      ? undefined
      : [text(error['code']) ?? text(error['name']), error['status'], text(error['serviceError'])]
          .filter((part) => part !== undefined)
          .join(' ');
  switch (state) {
    case 'SENT':
      parts.push(`${String(entry['credits'] ?? '?')} credits, balance ${String(entry['remainingBalance'] ?? '?')}`);
      break;
    case 'RETRY':
      parts.push(
        `attempt ${String(entry['attempt'] ?? '?')} failed (${errorText ?? 'error'}), next at ${nextAt(entry['nextAttemptAt'], entry['timestamp'])}`,
      );
      break;
    case 'PARKED':
      // A 402 carries the service's error and no reason; the gate parks with a reason of its own.
      parts.push(
        error === undefined && text(entry['reason']) !== undefined
          ? currentReason(text(entry['reason'])!)
          : reasonText('insufficientBalance'),
      );
      break;
    default:
      if (text(entry['reason']) !== undefined) parts.push(text(entry['reason'])!);
      if (errorText !== undefined) parts.push(`(${errorText})`);
  }
  return parts.join('  ');
}

/**
 * The attempt's provider, as the sender logs it: ` via at`, and on a failover
 * ` via at (failover from main: unreachable)`; nothing for a line without one.
 */
function via(entry: LogEntry): string {
  const provider = text(entry['provider']);
  if (provider === undefined) return '';
  const from = text(entry['failoverFrom']);
  if (from === undefined) return ` via ${provider}`;
  const reason = text(entry['failoverReason']);
  return ` via ${provider} (failover from ${from}${reason === undefined ? '' : `: ${reason}`})`;
}

/**
 * The SMS service's circuit opening or closing (see `functions/relay/circuit.ts`):
 * `SMS service unreachable since 12:00:01 (3 sends failed in a row, last server-error 503): sends paused, messages wait PENDING; probing the balance endpoint`
 * and `SMS service reachable again after 2 min 5 s (unreachable since 12:00:01): sending the waiting messages, oldest first`.
 */
function describeCircuit(entry: LogEntry): string {
  const since = clock(entry['since']);
  if (entry['circuit'] === 'open') {
    const failures =
      typeof entry['failures'] === 'number' ? `${entry['failures']} sends failed in a row` : 'sends failed';
    const last = text(entry['lastError']);
    return `SMS service unreachable since ${since} (${failures}${last === undefined ? '' : `, last ${last}`}): sends paused, messages wait PENDING; probing the balance endpoint`;
  }
  const from = Date.parse(String(entry['since']));
  const to = Date.parse(String(entry['closedAt']));
  const lasted = Number.isFinite(from) && Number.isFinite(to) ? ` after ${duration(to - from)}` : '';
  return `SMS service reachable again${lasted} (unreachable since ${since}): sending the waiting messages, oldest first`;
}

/** `45 s`, `2 min 5 s`, `1 h 3 min`. */
function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

/**
 * The balance watch's warning as a sentence: `balance 0 TZS is below the threshold of 100: a
 * low-balance SMS was recorded for 1 number`.
 */
function describeLowBalance(entry: LogEntry): string {
  const currency = text(entry['currency']);
  const notify = typeof entry['notify'] === 'number' ? entry['notify'] : 0;
  const days =
    typeof entry['daysLeft'] === 'number' ? `, about ${Math.floor(entry['daysLeft'])} days of sending left` : '';
  const told =
    notify === 0
      ? 'nobody to tell (balance.notify is empty)'
      : `a low-balance SMS was recorded for ${notify} number${notify === 1 ? '' : 's'}`;
  return `balance ${String(entry['balance'] ?? '?')}${currency === undefined ? '' : ` ${currency}`} is below the threshold of ${String(entry['threshold'] ?? '?')}${days}: ${told}`;
}

/** A paging step recorded: `alerts      escalation 1 → baraka`, `renotify → baraka, 2557****678`. */
function describeStep(entry: LogEntry): string {
  const route = text(entry['route']) ?? '?';
  const listed = Array.isArray(entry['people']) ? entry['people'] : Array.isArray(entry['to']) ? entry['to'] : [];
  const whom = listed.length === 0 ? 'nobody' : listed.map(String).join(', ');
  const step = entry.message === 'incident escalated' ? `escalation ${String(entry['step'] ?? '?')}` : 'renotify';
  return `${route.padEnd(10)}  ${step} → ${whom}`;
}

function describeBalance(entry: LogEntry): string {
  const currency = text(entry['currency']);
  const threshold = entry['threshold'];
  return [
    `${String(entry['balance'] ?? '?')}${currency === undefined ? '' : ` ${currency}`}`,
    typeof threshold === 'number' ? `(alert below ${threshold})` : undefined,
    entry['alerted'] === true ? 'LOW: alert SMS recorded' : undefined,
  ]
    .filter((part) => part !== undefined)
    .join('  ');
}

function generic(time: string, level: string, entry: LogEntry): string {
  const attributes = Object.entries(entry)
    .filter(([key]) => !STANDARD_KEYS.has(key))
    .map(([key, value]) => `${key}=${attributeText(key, value)}`)
    .join(' ');
  const shown =
    attributes.length > MAX_ATTRIBUTES_LENGTH ? `${attributes.slice(0, MAX_ATTRIBUTES_LENGTH)}…` : attributes;
  return `${time}  ${level.toLowerCase().padEnd(7)}  ${entry.message}${shown === '' ? '' : `  ${shown}`}`;
}

function attributeText(key: string, value: unknown): string {
  // Powertools serialises errors with their stack; the name and message are what a person needs here.
  if (key === 'error' && typeof value === 'object' && value !== null && 'message' in value) {
    const error = value as { name?: unknown; message?: unknown };
    return JSON.stringify(`${String(error.name ?? 'Error')}: ${String(error.message)}`);
  }
  if (typeof value === 'string') return /^[\w.:/@*+-]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `HH:MM:SS` in the machine's zone, from an ISO string; blanks when there is none. */
function clock(value: unknown): string {
  return typeof value === 'string' ? terminalClock(value) : '--:--:--';
}

/** A retry's time, `10:20:30 (in 2 min)`, counted from the line's own time. */
function nextAt(value: unknown, timestamp: unknown): string {
  if (typeof value !== 'string') return '--:--:--';
  const now = typeof timestamp === 'string' ? new Date(timestamp) : new Date();
  return formatTime(value, { seconds: true, now: Number.isNaN(now.getTime()) ? new Date() : now });
}

function statusText(status: number): string {
  return status >= 500 ? 'error' : status >= 400 ? 'refused' : 'ok';
}
