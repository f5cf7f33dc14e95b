import { describe, expect, it } from 'vitest';
import { currentReason, REASONS, type ReasonCode, reasonText } from '../../../functions/core/reasons';
import type { MessageRecord } from '../../../functions/store';
import { renderTable } from '../../../local/cli/commands/logs';
import { toRecordView } from '../../../local/records';
import { formatLogEntry, type LogEntry } from '../../../local/runtime/log-format';

const codes = Object.keys(REASONS) as ReasonCode[];

const parkedRecord = (reason: string): MessageRecord =>
  ({
    id: '01JD4ZP6Q3K8V0M2N7R5T9W1XY',
    route: 'notify',
    dedupeKey: 'k',
    lane: 'bulk',
    state: 'PARKED',
    attempts: 1,
    redrives: 0,
    createdAt: '2026-12-04T14:04:53.000Z',
    updatedAt: '2026-12-04T14:04:54.000Z',
    index: 0,
    part: 1,
    parts: 1,
    text: 'hello',
    to: ['255712345678'],
    encoding: 'GSM-7',
    characters: 5,
    segments: 1,
    delivery: 'at-most-once',
    history: [],
    expiresAt: 0,
    reason,
  }) as MessageRecord;

describe('the reasons table: one wording per reason on every surface', () => {
  it('gives every reason one text of its own and an action', () => {
    const texts = codes.map((code) => REASONS[code].text);
    expect(new Set(texts).size).toBe(codes.length);
    for (const code of codes) {
      expect(REASONS[code].action).not.toBe('');
      expect(reasonText(code)).toBe(`${REASONS[code].text}: ${REASONS[code].action}`);
    }
  });

  it('puts a detail between the text and the action', () => {
    expect(reasonText('balanceReserve', '20 credits would leave 480')).toBe(
      `balance reserve: 20 credits would leave 480; ${REASONS.balanceReserve.action}`,
    );
  });

  it("shows a 402's park in the same words on the terminal line, in the record view the console's API serves, and in logs", () => {
    const wording = reasonText('insufficientBalance');
    const terminal = formatLogEntry({
      level: 'ERROR',
      message: 'sms',
      timestamp: '2026-12-04T14:04:54.000Z',
      route: 'notify',
      to: ['2557****678'],
      state: 'PARKED',
      segments: 1,
      error: { code: 'insufficient-balance', status: 402 },
    } as unknown as LogEntry);
    expect(terminal).toMatch(new RegExp(`  ${wording.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));

    const view = toRecordView(parkedRecord(wording));
    expect(view.reason).toBe(wording);
    expect(renderTable([view]).split('\n')[1]).toMatch(
      new RegExp(`  ${wording.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
    );
  });

  it("reads a record parked in the old wording in the table's words", () => {
    const old = 'insufficient balance (402): waiting for a top-up and redrive';
    expect(currentReason(old)).toBe(reasonText('insufficientBalance'));
    expect(toRecordView(parkedRecord(old)).reason).toBe(reasonText('insufficientBalance'));
    // Any other reason is left as written.
    expect(currentReason('muted until 14:30: db upgrade')).toBe('muted until 14:30: db upgrade');
  });
});
