import { PAGE_SIZE } from '../../functions/core/defaults';
import { parseDurationSeconds } from '../../functions/core/config/duration';
import { maskMsisdn, maskNumbersInText } from '../../functions/core/recipients';
import { MessageState, type MessageRecord, type MessageStore, type RequeueFrom } from '../../functions/store';
import type { RecordRow } from '../console/contract';
import { invalidSetting } from './errors';

/**
 * One message record as `logs` shows it, `/_relay/records` returns it and the console lists it:
 * numbers masked, no text, no claim token. Absent values are `null`, so every key is always there
 * for scripts. Defined once, with the console's JSON views.
 */
export type RecordView = RecordRow;

/**
 * The masked view of a record.
 *
 * @example
 * ```ts
 * toRecordView(record).to; // ['2557****678']
 * ```
 */
export function toRecordView(record: MessageRecord): RecordView {
  const reason = record.reason ?? (record.state === MessageState.Pending ? record.lastError?.message : undefined);
  return {
    id: record.id,
    route: record.route,
    state: record.state,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    to: record.to.map(maskMsisdn),
    segments: record.segments,
    attempts: record.attempts,
    // Reasons can quote a recipient entry ("0712… is not a mobile number").
    reason: reason === undefined ? null : maskNumbersInText(reason),
    deducted: record.result?.deducted ?? null,
    remainingBalance: record.result?.remainingBalance ?? null,
  };
}

export const MESSAGE_STATES: readonly MessageState[] = Object.values(MessageState);

/** Which records to list. */
export interface RecordQuery {
  readonly route?: string;
  readonly state?: MessageState;
  /** With `route`: created at or after; otherwise: last changed at or after. */
  readonly since?: Date;
  /** Only records strictly before this (same time as `since`). */
  readonly before?: Date;
  /** The newest this many. No limit: all of them. */
  readonly limit?: number;
}

/** The store's largest page: the local store reads the whole table for each page of a listing. */
const PAGE = PAGE_SIZE.max;

/**
 * Lists records newest first: by route (index `byRoute`, creation time) when a route is given,
 * otherwise by state (index `byState`, time of the last change) across one or every state.
 *
 * @example
 * ```ts
 * const parked = await queryRecords(store, { state: 'PARKED', since: new Date(Date.now() - 86_400_000) });
 * ```
 */
export async function queryRecords(store: MessageStore, { route, state, since, before, limit }: RecordQuery): Promise<MessageRecord[]> {
  const wanted = limit ?? Number.POSITIVE_INFINITY;
  if (route !== undefined) {
    return await collect(wanted, (cursor) => store.listByRoute(route, page(since, before, cursor)), (record) => state === undefined || record.state === state);
  }
  if (state === undefined) return await store.listRecent({ ...(since === undefined ? {} : { since }), ...(before === undefined ? {} : { before }), ...(limit === undefined ? {} : { limit }) });
  return await collect(wanted, (cursor) => store.listByState(state, page(since, before, cursor)), () => true);
}

function page(since: Date | undefined, before: Date | undefined, cursor: string | undefined): { since?: Date; before?: Date; cursor?: string; limit: number; newestFirst: true } {
  return { ...(since === undefined ? {} : { since }), ...(before === undefined ? {} : { before }), ...(cursor === undefined ? {} : { cursor }), limit: PAGE, newestFirst: true };
}

async function collect(
  wanted: number,
  fetchPage: (cursor: string | undefined) => Promise<{ readonly items: readonly MessageRecord[]; readonly cursor?: string }>,
  keep: (record: MessageRecord) => boolean,
): Promise<MessageRecord[]> {
  const found: MessageRecord[] = [];
  let cursor: string | undefined;
  do {
    const result = await fetchPage(cursor);
    found.push(...result.items.filter(keep));
    cursor = result.cursor;
  } while (cursor !== undefined && found.length < wanted);
  return found.slice(0, wanted);
}

/** States `redrive` can send back to PENDING. */
export const REDRIVE_STATES = [MessageState.Parked, MessageState.Failed, MessageState.Held] as const satisfies readonly RequeueFrom[];

export interface RequeueOutcome {
  /** Ids moved to PENDING. */
  readonly requeued: readonly string[];
  /** Ids no longer in `from` (sent meanwhile, or redriven by someone else). */
  readonly skipped: readonly string[];
}

/**
 * Moves records back to PENDING, each conditional on still being in `from`.
 *
 * @example
 * ```ts
 * const { requeued } = await requeueRecords(store, ids, 'PARKED');
 * ```
 */
export async function requeueRecords(store: MessageStore, ids: readonly string[], from: RequeueFrom): Promise<RequeueOutcome> {
  // Side by side: against DynamoDB from an operator's machine each write is a round trip to the
  // region, and one after the other they, not the sender, would set a redrive's pace.
  const moved = await Promise.all(ids.map(async (id) => (await store.requeue(id, { from })) !== undefined));
  return { requeued: ids.filter((_, index) => moved[index]), skipped: ids.filter((_, index) => !moved[index]) };
}

/**
 * Reads `--since`: a duration back from now (`30m`, `2h`, `3d`, seconds) or an ISO-8601 time.
 *
 * @throws {RuntimeError}
 *
 * @example
 * ```ts
 * parseSince('2h', new Date('2025-01-01T12:00:00Z')); // 2025-01-01T10:00:00.000Z
 * parseSince('2025-01-01T08:00:00Z'); // that instant
 * ```
 */
export function parseSince(value: string, now: Date = new Date()): Date {
  // Bare digits are seconds, as in the config's durations.
  const seconds = /^\s*\d+\s*$/.test(value) ? parseDurationSeconds(Number(value)) : parseDurationSeconds(value);
  if (seconds !== undefined) return new Date(now.getTime() - seconds * 1000);
  // Date.parse accepts odd things ("1"); only ISO-looking input is taken as a time.
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value.trim())) {
    const at = new Date(value.trim());
    if (!Number.isNaN(at.getTime())) return at;
  }
  throw invalidSetting('--since', `expected a duration like 30m, 2h, 3d or an ISO time like 2025-01-31T08:00:00Z, got "${value}"`);
}

/**
 * Reads a state name, any case.
 *
 * @throws {RuntimeError}
 */
export function parseState<const T extends readonly MessageState[]>(value: string, allowed: T, setting = '--state'): T[number] {
  const state = value.trim().toUpperCase();
  const found = allowed.find((each) => each === state);
  if (found === undefined) throw invalidSetting(setting, `expected one of ${allowed.join(', ')}, got "${value}"`);
  return found;
}
