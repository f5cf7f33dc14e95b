/**
 * The one local record API: the records listed, paged, viewed and requeued the same way for
 * `sms-relay logs` and `redrive` (through the runtime's `/_relay` endpoints, or the store opened
 * by the CLI) and for the console's Activity and Redrive. The JSON and the request schemas are in
 * `contract.ts`.
 */
import { maskMsisdn, maskNumbersInText } from '../../functions/core/recipients';
import { PAGE_SIZE } from '../../functions/core/defaults';
import { currentReason } from '../../functions/core/reasons';
import {
  type DismissFrom,
  MessageState,
  type MessageRecord,
  type MessageStore,
  type RequeueFrom,
  StoreError,
} from '../../functions/store';
import { HttpError } from '../http';
import type { z } from 'zod';
import {
  cursorPosition,
  DISMISS_STATES,
  type DismissAnswer,
  type DismissResult,
  MAX_REDRIVE_IDS,
  NOT_DISMISSIBLE,
  MAY_HAVE_ARRIVED,
  needsAcceptDuplicates,
  REDRIVE_STATES,
  type RecordsPageQuery,
  STATES,
  type RecordsPage,
  type RecordView,
  type RedriveAnswer,
  type RequeueOutcome,
  type State,
} from './contract';

/** What the listings (`logs`, the console's records) use of the store. */
export type ListingStore = Pick<MessageStore, 'listByRoute' | 'listByState' | 'listRecent'>;
/** What a redrive uses of the store: the conditional requeue, and the record before and after. */
export type RedriveStore = Pick<MessageStore, 'requeue' | 'getMessage'>;
/** What a dismissal uses of the store: the conditional dismiss, and the listings for one by state. */
export type DismissStore = Pick<MessageStore, 'dismiss'> & ListingStore;

export * from './contract';

/**
 * Every state, in the store's order. The JSON's states are the store's: a state added to one and
 * not the other fails the type check here.
 */
export const MESSAGE_STATES: readonly MessageState[] = Object.values(MessageState) satisfies readonly State[];
// biome-ignore lint/correctness/noUnusedVariables: a type check, never read
const JSON_STATES_ARE_STORE_STATES: readonly MessageState[] = STATES;
// biome-ignore lint/correctness/noUnusedVariables: a type check, never read
const REDRIVE_STATES_ARE_REQUEUEABLE: readonly RequeueFrom[] = REDRIVE_STATES;
// biome-ignore lint/correctness/noUnusedVariables: a type check, never read
const DISMISS_STATES_ARE_DISMISSIBLE: readonly DismissFrom[] = DISMISS_STATES;

/**
 * The masked view of a record.
 *
 * @example
 * ```ts
 * toRecordView(record).to; // ['2557****678']
 * ```
 */
export function toRecordView(record: MessageRecord): RecordView {
  const stored = record.reason ?? (record.state === MessageState.Pending ? record.lastError?.message : undefined);
  // A record parked before the reasons table reads in today's wording, as the terminal says it.
  const reason = stored === undefined ? undefined : currentReason(stored);
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
    provider: record.provider ?? null,
    failoverFrom: record.failoverFrom ?? null,
    failoverReason: record.failoverReason ?? null,
    dismissal:
      record.dismissal === undefined
        ? null
        : { ...record.dismissal, reason: maskNumbersInText(record.dismissal.reason) },
  };
}

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
export async function queryRecords(
  store: ListingStore,
  { route, state, since, before, limit }: RecordQuery,
): Promise<MessageRecord[]> {
  const wanted = limit ?? Number.POSITIVE_INFINITY;
  if (route !== undefined) {
    return await collect(
      wanted,
      (cursor) => store.listByRoute(route, page(since, before, cursor)),
      (record) => state === undefined || record.state === state,
    );
  }
  if (state === undefined)
    return await store.listRecent({
      ...(since === undefined ? {} : { since }),
      ...(before === undefined ? {} : { before }),
      ...(limit === undefined ? {} : { limit }),
    });
  return await collect(
    wanted,
    (cursor) => store.listByState(state, page(since, before, cursor)),
    () => true,
  );
}

function page(
  since: Date | undefined,
  before: Date | undefined,
  cursor: string | undefined,
): { since?: Date; before?: Date; cursor?: string; limit: number; newestFirst: true } {
  return {
    ...(since === undefined ? {} : { since }),
    ...(before === undefined ? {} : { before }),
    ...(cursor === undefined ? {} : { cursor }),
    limit: PAGE,
    newestFirst: true,
  };
}

async function collect(
  wanted: number,
  fetchPage: (
    cursor: string | undefined,
  ) => Promise<{ readonly items: readonly MessageRecord[]; readonly cursor?: string }>,
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

/**
 * One page of records ({@link RecordsPageQuery}), newest first, as `logs` lists them (by last change; by creation with a
 * route). The cursor is the time and id of the last row, so a page stays correct while new
 * records arrive at the top.
 *
 * @throws {HttpError} 400 for a cursor this API did not give
 */
export async function recordsPage(
  store: ListingStore,
  { route, state, since, cursor, limit }: z.output<typeof RecordsPageQuery>,
): Promise<RecordsPage> {
  const after = cursor === undefined ? undefined : cursorPosition(cursor);
  const timeOf = (record: MessageRecord): string => (route === undefined ? record.updatedAt : record.createdAt);
  const before = after === undefined ? undefined : new Date(Date.parse(after.at) + 1);
  const found = await queryRecords(store, {
    ...(route === undefined ? {} : { route }),
    ...(state === undefined ? {} : { state }),
    ...(since === undefined ? {} : { since }),
    ...(before === undefined ? {} : { before }),
    limit: limit + readAhead({ route, state, after }),
  });
  const ordered = found
    .filter(
      (record) =>
        after === undefined || timeOf(record) < after.at || (timeOf(record) === after.at && record.id < after.id),
    )
    .sort((a, b) => (timeOf(a) === timeOf(b) ? (a.id < b.id ? 1 : -1) : timeOf(a) < timeOf(b) ? 1 : -1));
  const rows = ordered.slice(0, limit);
  const last = rows.at(-1);
  return {
    records: rows.map(toRecordView),
    ...(ordered.length > limit && last !== undefined ? { cursor: `${timeOf(last)}|${last.id}` } : {}),
  };
}

/**
 * Records a page reads beyond its rows. One says whether there is a next page. Rows sharing the
 * page's edge millisecond need more: a later page reads that millisecond again (its rows already
 * shown take places), and a listing by route or state gets equal times in the index's order, not
 * in the page's (by id). The first page of every state (`listRecent`, ordered as the page is)
 * needs only the one: Activity's first page, read again at each poll.
 */
const readAhead = ({
  route,
  state,
  after,
}: {
  readonly route: string | undefined;
  readonly state: string | undefined;
  readonly after: unknown;
}): number => (route === undefined && state === undefined && after === undefined ? 1 : SAME_TIME_MARGIN);

/** Rows of one millisecond a page's edge can cut through without skipping one. */
const SAME_TIME_MARGIN = 50;

/** What a redrive's caller agreed to. */
export interface RedriveConsent {
  /**
   * Redrive UNKNOWN records, which may already have arrived (see {@link MAY_HAVE_ARRIVED}); without it they are refused.
   * @default false
   */
  readonly acceptDuplicates?: boolean;
}

/**
 * Moves records back to PENDING, each conditional on still being in `from`.
 *
 * @throws {HttpError} 400 for `from: UNKNOWN` without `acceptDuplicates`
 *
 * @example
 * ```ts
 * const { requeued } = await requeueRecords(store, ids, 'PARKED');
 * ```
 */
export async function requeueRecords(
  store: RedriveStore,
  ids: readonly string[],
  from: RequeueFrom,
  { acceptDuplicates = false }: RedriveConsent = {},
): Promise<RequeueOutcome> {
  if (needsAcceptDuplicates(from) && !acceptDuplicates)
    throw new HttpError(400, `acceptDuplicates: must be true with "from": "UNKNOWN": ${MAY_HAVE_ARRIVED}`);
  // Side by side: against DynamoDB from an operator's machine each write is a round trip to the
  // region, and one after the other they, not the sender, would set a redrive's pace.
  const moved = await Promise.all(
    ids.map(async (id) => (await store.requeue(id, { from, acceptDuplicates })) !== undefined),
  );
  return { requeued: ids.filter((_, index) => moved[index]), skipped: ids.filter((_, index) => !moved[index]) };
}

/**
 * One record by id, for a page that shows or redrives it.
 *
 * @throws {HttpError} 409 when this version cannot read it (a value a newer version wrote, seen after a rollback)
 */
export async function readRecord(
  store: Pick<MessageStore, 'getMessage'>,
  id: string,
): Promise<MessageRecord | undefined> {
  try {
    return await store.getMessage(id);
  } catch (error) {
    if (error instanceof StoreError)
      throw new HttpError(
        409,
        `${id} cannot be read by this version of sms-relay (written by a newer one?): ${error.message}; it is left as it is`,
      );
    throw error;
  }
}

/**
 * Redrives one record from whatever redrivable state it is in (the console's Redrive button): the
 * same conditional requeue as {@link requeueRecords}, and the record as it is afterwards.
 *
 * @throws {HttpError} 404 for no such record, 409 when its state cannot be redriven, 400 for an UNKNOWN one without `acceptDuplicates`
 */
export async function redriveRecord(
  store: RedriveStore,
  id: string,
  consent: RedriveConsent = {},
): Promise<RedriveAnswer> {
  const record = await readRecord(store, id);
  if (record === undefined) throw new HttpError(404, `no record ${id}`);
  const from = REDRIVE_STATES.find((state) => state === record.state);
  if (from === undefined)
    throw new HttpError(409, `${id} is ${record.state}; only ${REDRIVE_STATES.join(', ')} records can be redriven`);
  const { requeued } = await requeueRecords(store, [id], from, consent);
  const current = await store.getMessage(id);
  return { requeued: requeued.length > 0, record: current === undefined ? null : toRecordView(current) };
}

/** Who dismisses and why; `from`: only records still in that state. */
export interface DismissDecision {
  readonly by: string;
  readonly reason: string;
  readonly from?: DismissFrom;
}

/** Which records a dismissal by state ends: those `logs --state` would list with the same filters. */
export interface DismissSelection {
  readonly state: DismissFrom;
  readonly route?: string;
  readonly since?: Date;
}

/**
 * Dismisses records: each one conditionally (see the store's `dismiss`), so a record sent, redriven
 * or dismissed by someone else meanwhile is refused and left as it is, with its state and why.
 *
 * @throws {HttpError} 400 for a reason or a name the store refuses (empty, too long)
 *
 * @example
 * ```ts
 * const { dismissed, refused } = await dismissRecords(store, ids, { by: 'asha', reason: 'number disconnected' });
 * ```
 */
export async function dismissRecords(
  store: Pick<MessageStore, 'dismiss'>,
  ids: readonly string[],
  decision: DismissDecision,
): Promise<DismissResult> {
  const dismissed: string[] = [];
  const refused: { id: string; state: State | null; why: string }[] = [];
  // A hundred at a time side by side: a round trip each on AWS, but not thousands at once.
  for (let start = 0; start < ids.length; start += MAX_REDRIVE_IDS) {
    const chunk = ids.slice(start, start + MAX_REDRIVE_IDS);
    const outcomes = await Promise.all(chunk.map(async (id) => await dismissOne(store, id, decision)));
    for (const [index, outcome] of outcomes.entries()) {
      const id = chunk[index]!;
      if (outcome.dismissed) dismissed.push(id);
      else {
        const state = (outcome.record?.state ?? null) as State | null;
        refused.push({ id, state, why: refusal(state, decision.from) });
      }
    }
  }
  return { dismissed, refused };
}

/**
 * Dismisses the records of a state (`route`, `since` as {@link queryRecords} reads them), each only
 * while it is still in that state.
 */
export async function dismissSelected(
  store: DismissStore,
  { state, route, since }: DismissSelection,
  { by, reason }: Omit<DismissDecision, 'from'>,
): Promise<DismissResult> {
  const records = await queryRecords(store, {
    state,
    ...(route === undefined ? {} : { route }),
    ...(since === undefined ? {} : { since }),
  });
  return await dismissRecords(
    store,
    records.map((record) => record.id),
    { by, reason, from: state },
  );
}

/**
 * Dismisses one record from whatever dismissible state it is in (the console's Dismiss), and the
 * record as it is afterwards.
 *
 * @throws {HttpError} 404 for no such record, 409 when its state cannot be dismissed
 */
export async function dismissRecord(
  store: Pick<MessageStore, 'dismiss' | 'getMessage'>,
  id: string,
  decision: Omit<DismissDecision, 'from'>,
): Promise<DismissAnswer> {
  if ((await readRecord(store, id)) === undefined) throw new HttpError(404, `no record ${id}`);
  const { dismissed, refused } = await dismissRecords(store, [id], decision);
  const [why] = refused;
  if (why !== undefined) throw new HttpError(409, `${id} ${why.why}`);
  const current = await store.getMessage(id);
  return { dismissed: dismissed.length > 0, record: current === undefined ? null : toRecordView(current) };
}

async function dismissOne(store: Pick<MessageStore, 'dismiss'>, id: string, decision: DismissDecision) {
  try {
    return await store.dismiss(id, decision);
  } catch (error) {
    if (error instanceof StoreError) throw new HttpError(400, error.message, { cause: error });
    throw error;
  }
}

/** Why a record was not dismissed, after its id: `is SENT: only … can be dismissed`. */
function refusal(state: State | null, from: DismissFrom | undefined): string {
  if (state === null) return 'is no record (expired, or a wrong id)';
  if (from !== undefined && (DISMISS_STATES as readonly string[]).includes(state) && state !== from)
    return `is no longer ${from} (now ${state}): left as it is`;
  if ((DISMISS_STATES as readonly string[]).includes(state))
    return `changed state meanwhile (now ${state}): left as it is`;
  return `is ${state}: ${NOT_DISMISSIBLE}; left as it is`;
}
