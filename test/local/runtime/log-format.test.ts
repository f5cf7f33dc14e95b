import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRedactor, formatLogEntry, formatWebhook, type LogEntry } from '../../../local/runtime/log-format';
import { reasonText } from '../../../functions/core/reasons';
import { createTerminalLogger } from '../../../local/runtime/terminal-logger';
import { apiRequestShape } from '../../../local/runtime/server';

const at = '2025-01-01T10:20:30.000Z';
const time = new Date(at).toTimeString().slice(0, 8);
const entry = (fields: Record<string, unknown>): LogEntry =>
  ({ level: 'INFO', timestamp: at, service: 'sms-relay', ...fields }) as unknown as LogEntry;

describe('human log lines', () => {
  it('show a send with route, state, masked numbers, segments, credits and balance', () => {
    const line = formatLogEntry(
      entry({
        message: 'sms',
        id: '01J',
        route: 'orders',
        to: ['2557****222', '2557****678'],
        state: 'SENT',
        segments: 1,
        attempt: 1,
        credits: 40,
        remainingBalance: 9960,
      }),
    );
    expect(line).toBe(
      `${time}  sms      orders      SENT    to 2557****222, 2557****678  1 segment  40 credits, balance 9960`,
    );
  });

  it('name the provider that sent, and the one a failover moved on from and why', () => {
    const sent = { message: 'sms', route: 'alerts', to: ['2557****678'], state: 'SENT', segments: 1, credits: 1 };
    expect(formatLogEntry(entry({ ...sent, provider: 'main', remainingBalance: 99 }))).toBe(
      `${time}  sms      alerts      SENT    to 2557****678 via main  1 segment  1 credits, balance 99`,
    );
    expect(
      formatLogEntry(
        entry({ ...sent, provider: 'at', failoverFrom: 'main', failoverReason: 'unreachable', remainingBalance: 99 }),
      ),
    ).toBe(
      `${time}  sms      alerts      SENT    to 2557****678 via at (failover from main: unreachable)  1 segment  1 credits, balance 99`,
    );
    expect(
      formatLogEntry(
        entry({
          message: 'sms',
          route: 'alerts',
          to: ['2557****678'],
          state: 'UNKNOWN',
          segments: 1,
          provider: 'main',
          reason: 'the send timed out',
        }),
      ),
    ).toBe(`${time}  sms      alerts      UNKNOWN to 2557****678 via main  1 segment  the send timed out`);
  });

  it("print a send as the README's tour shows it", () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const shown = readme.split('\n').find((line) => line.includes('  sms      notify'));
    const line = formatLogEntry(
      entry({
        message: 'sms',
        route: 'notify',
        to: ['2557****678'],
        provider: 'main',
        state: 'SENT',
        segments: 1,
        credits: 20,
        remainingBalance: 9980,
      }),
    );
    expect(shown?.trim().slice('03:30:37'.length)).toBe(line?.slice(time.length));
  });

  it('show a retry, a parked and a failed send with what to do or what went wrong', () => {
    const retry = formatLogEntry(
      entry({
        level: 'WARN',
        message: 'sms',
        route: 'alerts',
        to: ['2557****678'],
        state: 'RETRY',
        segments: 2,
        attempt: 3,
        error: { name: 'SmsConnectionRefusedError', delivery: 'not-sent' },
        nextAttemptAt: '2025-01-01T10:22:30.000Z',
      }),
    );
    const next = new Date('2025-01-01T10:22:30.000Z').toTimeString().slice(0, 8);
    expect(retry).toBe(
      `${time}  sms      alerts      RETRY   to 2557****678  2 segments  attempt 3 failed (SmsConnectionRefusedError), next at ${next} (in 2 min)`,
    );
    const parked = formatLogEntry(
      entry({ level: 'ERROR', message: 'sms', route: 'notify', to: ['2557****678'], state: 'PARKED', segments: 1 }),
    );
    expect(parked).toContain(`PARKED  to 2557****678  1 segment  ${reasonText('insufficientBalance')}`);
    // Parked by the reserve, not refused by the service: the line says so, not "insufficient balance".
    const reserve = reasonText(
      'balanceReserve',
      '20 credits would leave 490, below the reserve of 500 kept for critical routes',
    );
    expect(
      formatLogEntry(
        entry({
          level: 'ERROR',
          message: 'sms',
          route: 'orders',
          to: ['2557****222'],
          state: 'PARKED',
          segments: 1,
          reason: reserve,
        }),
      ),
    ).toContain(`PARKED  to 2557****222  1 segment  ${reserve}`);
    const failed = formatLogEntry(
      entry({
        level: 'ERROR',
        message: 'sms',
        route: 'notify',
        to: ['2557****678'],
        state: 'FAILED',
        segments: 1,
        error: { name: 'SmsBadRequestError', status: 400, serviceError: 'bad senderId' },
      }),
    );
    expect(failed).toContain('FAILED  to 2557****678  1 segment  (SmsBadRequestError 400 bad senderId)');
  });

  it('show the balance watch', () => {
    expect(
      formatLogEntry(entry({ message: 'balance', balance: 80, currency: 'TZS', threshold: 100, alerted: true })),
    ).toBe(`${time}  balance  80 TZS  (alert below 100)  LOW: alert SMS recorded`);
  });

  it('word the balance falling below its threshold as a sentence, not as key=value pairs', () => {
    expect(
      formatLogEntry(
        entry({ level: 'WARN', message: 'balance below threshold', balance: 0, threshold: 100, notify: 1 }),
      ),
    ).toBe(`${time}  balance  balance 0 is below the threshold of 100: a low-balance SMS was recorded for 1 number`);
    expect(
      formatLogEntry(
        entry({ level: 'WARN', message: 'balance below threshold', balance: 40, threshold: 100, notify: 0 }),
      ),
    ).toBe(`${time}  balance  balance 40 is below the threshold of 100: nobody to tell (balance.notify is empty)`);
  });

  it("name an escalation's step and whom it pages, by the people's names", () => {
    expect(
      formatLogEntry(
        entry({ message: 'incident escalated', route: 'alerts', step: 1, to: ['2557****111'], people: ['baraka'] }),
      ),
    ).toBe(`${time}  page     alerts      escalation 1 → baraka`);
    expect(
      formatLogEntry(
        entry({
          message: 'incident renotified',
          route: 'alerts',
          step: 3,
          to: ['2557****111', '2557****678'],
          people: ['baraka', '2557****678'],
        }),
      ),
    ).toBe(`${time}  page     alerts      renotify → baraka, 2557****678`);
  });

  it('show the SMS service becoming unreachable and reachable again', () => {
    const since = '2025-01-01T10:18:00.000Z';
    const sinceTime = new Date(since).toTimeString().slice(0, 8);
    expect(
      formatLogEntry(
        entry({
          level: 'ERROR',
          message: 'circuit',
          circuit: 'open',
          since,
          failures: 3,
          lastError: 'server-error 503',
          nextProbeAt: at,
        }),
      ),
    ).toBe(
      `${time}  service  SMS service unreachable since ${sinceTime} (3 sends failed in a row, last server-error 503): sends paused, messages wait PENDING; probing the balance endpoint`,
    );
    expect(
      formatLogEntry(entry({ level: 'WARN', message: 'circuit', circuit: 'closed', since, closedAt: at, probes: 4 })),
    ).toBe(
      `${time}  service  SMS service reachable again after 2 min 30 s (unreachable since ${sinceTime}): sending the waiting messages, oldest first`,
    );
  });

  it("leave ingest's webhook lines to the runtime's own line, and quiet INFO unless verbose", () => {
    expect(
      formatLogEntry(entry({ level: 'WARN', message: 'webhook refused', route: 'github', reason: 'x' })),
    ).toBeUndefined();
    expect(formatLogEntry(entry({ message: 'something routine', n: 1 }))).toBeUndefined();
    expect(formatLogEntry(entry({ message: 'something routine', n: 1 }), { verbose: true })).toBe(
      `${time}  info     something routine  n=1`,
    );
    expect(
      formatLogEntry(
        entry({
          level: 'ERROR',
          message: 'webhook not recorded',
          route: 'github',
          error: { name: 'TimeoutError', message: 'store slow', stack: 'at …' },
        }),
      ),
    ).toBe(`${time}  error    webhook not recorded  route=github error="TimeoutError: store slow"`);
  });

  it('show one line per webhook with its status', () => {
    const now = new Date(at);
    expect(
      formatWebhook({ route: 'notify', status: 202, outcome: 'accepted', reason: undefined, ids: ['a', 'b'] }, now),
    ).toBe(`${time}  webhook  notify      202 accepted: 2 SMS queued`);
    expect(
      formatWebhook({ route: 'notify', status: 200, outcome: 'duplicate', reason: undefined, ids: ['a'] }, now),
    ).toBe(`${time}  webhook  notify      200 duplicate: already received, nothing sent`);
    // A route's API (Opsgenie's close) answers 202 without queuing an SMS.
    expect(
      formatWebhook(
        {
          route: 'og',
          status: 202,
          outcome: `api POST ${apiRequestShape('/hooks/og/v2/alerts/17c4e445d2/close')}`,
          reason: 'Request will be processed',
          ids: [],
        },
        now,
      ),
    ).toBe(`${time}  webhook  og          202 api POST v2/alerts/{id}/close: Request will be processed`);
    expect(apiRequestShape('/hooks/og/v2/alerts/requests/6c113ad7')).toBe('v2/alerts/requests/{id}');
    expect(apiRequestShape('/hooks/og/v2/heartbeats/nightly/ping')).toBe('v2/heartbeats/{id}/ping');
    expect(apiRequestShape('/hooks/og/v2/alerts/0712345678')).toBe('v2/alerts/{id}');
    expect(
      formatWebhook(
        {
          route: 'github',
          status: 401,
          outcome: 'unauthorized',
          reason: 'X-Hub-Signature-256 does not match the body',
          ids: [],
        },
        now,
      ),
    ).toBe(`${time}  webhook  github      401 unauthorized: X-Hub-Signature-256 does not match the body`);
  });

  it('redact secrets and mask phone numbers anywhere in a line', () => {
    const redact = createRedactor(['whsec_abcdef123', 'tiny', 'abcdef']);
    expect(redact('key whsec_abcdef123 and abcdef, to +255 712 345 678 or 0754111222, tiny stays')).toBe(
      'key [redacted] and [redacted], to 2557****678 or 2557****222, tiny stays',
    );
    expect(redact('entry "712 345 678" dropped, 0712+345+678 in a form body')).toBe(
      'entry "2557****678" dropped, 2557****678 in a form body',
    );
  });
});

describe('the terminal logger the local runtime hands to the relay operations', () => {
  it('prints one formatted, masked line per send, errors to stderr', () => {
    const out: string[] = [];
    const errors: string[] = [];
    const terminal = {
      printVerbatim: () => undefined,
      print: (line: string) => void out.push(line),
      printError: (line: string) => void errors.push(line),
    };
    const logger = createTerminalLogger(terminal);
    logger.info('sms', {
      id: '01J',
      route: 'notify',
      to: ['2557****678'],
      provider: 'main',
      state: 'SENT',
      segments: 1,
      attempt: 1,
      credits: 20,
      remainingBalance: 9980,
    });
    logger.error('sms', { id: '01K', route: 'notify', to: ['255712345678'], state: 'PARKED', segments: 1 });
    logger.info('something routine', { n: 1 });
    logger.warn('sms', {
      route: 'alerts',
      to: ['2557****678'],
      state: 'RETRY',
      segments: 1,
      attempt: 2,
      error: Object.assign(new Error('refused'), { code: 'refused' }),
      nextAttemptAt: new Date(Date.now() + 5 * 60_000).toISOString(),
    });

    expect(out[0]).toMatch(
      // biome-ignore lint/complexity/noAdjacentSpacesInRegex: the spaces are the line's columns, as the terminal shows them
      /^\d\d:\d\d:\d\d  sms      notify      SENT    to 2557\*\*\*\*678 via main  1 segment  20 credits, balance 9980$/,
    );
    expect(out[1]).toMatch(/attempt 2 failed \(refused\), next at \d\d:\d\d:\d\d \(in [45] min\)$/);
    expect(out).toHaveLength(2);
    // Masked as the Lambda logger masks, before anything is formatted.
    expect(errors).toEqual([expect.stringContaining('PARKED  to 2557****678')]);
  });
});
