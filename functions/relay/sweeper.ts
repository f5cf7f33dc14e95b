import { literalRecipients, type RelayConfigView } from '../core/config/view';
import { DeliveryPolicy } from '../core/config/policies';
import { ClaimLostError, MessageState, type MessageRecord, NoticeKind } from '../store';
import { checkHeartbeats, type HeartbeatReport } from './heartbeat';
import { noticeMessage } from './notice';
import { RelayMetric, type RelayContext } from './ports';
import { probeIfDue, readCircuit } from './circuit';
import { mayRetry } from './retry';
import { sendMessage, type SendOutcome } from './sender';
import { type DigestOptions, recordDigests } from './digest';
import { recordEscalations } from './paging';
import { recordHandoffs } from './handoff';
import { publishStuckCounts } from './gauges';

export interface SweepOptions {
  /**
   * PENDING records younger than this are left to the stream-fed sender, which is about to take them.
   * @default 0
   */
  readonly pendingGraceMs?: number;
  /**
   * Records sent at the same time.
   * @default 4
   */
  readonly concurrency?: number;
  /**
   * At most this many records per state per sweep, so one run stays inside its time-out.
   * @default 200
   */
  readonly limit?: number;
  /**
   * Asked before each send; `false` starts no more (the Lambda handler stops while enough of its
   * time-out is left for a send in flight to finish). The records left stay due for the next sweep.
   * @default () => true
   */
  readonly canContinue?: () => boolean;
  /**
   * Hands the due records' ids to this instead of sending them in the sweep: the local runtime's
   * send queue, which sends at the sender's normal rate. Every due record is then listed, page by
   * page (`limit` each), not only the first `limit`; the sweep itself only reads and recovers.
   */
  readonly dispatch?: (ids: readonly string[]) => void;
  /** How digests are recorded (their grace, the compiler of their templates on Lambda). */
  readonly digests?: DigestOptions;
  /**
   * Whether the run may wait `ms` more and still have time to send. With it, a sweep that finds the
   * SMS service unreachable stays to probe it at its backoff (at most 30 s apart) instead of once a
   * run, and sends the due records as soon as a probe finds it back: on AWS, where the sweeper runs
   * once a minute, the probes keep their backoff. Without it (locally, where sweeps run every few
   * seconds), one probe at most per sweep.
   * @default () => false
   */
  readonly canWait?: (ms: number) => boolean;
}

export interface SweepReport {
  readonly sent: Partial<Record<SendOutcome, number>>;
  readonly recovered: number;
  readonly summaries: number;
  /** The dead-man's switch SMS this sweep recorded (see `checkHeartbeats`). */
  readonly heartbeats: HeartbeatReport;
  /** Digest SMS recorded (one per route and ended quiet period or digest window). */
  readonly digests: number;
  /** Records whose send threw (the store failing): logged and left for the next sweep. */
  readonly errors: number;
  /** Due records not started because `canContinue` said stop. */
  readonly deferred: number;
  /** Due records handed to `dispatch` (only with `dispatch`). */
  readonly dispatched?: number;
}

/**
 * The safety net behind the stream-fed sender, run on a schedule: sends PENDING records that are
 * due (retries after backoff, redriven records, anything the stream missed or a restart left),
 * settles SENDING records whose sender died, records one digest SMS per route and ended quiet period
 * or digest window, one summary SMS per route window in which a limit held messages back, and runs
 * the routes' dead-man's switches (`heartbeat`); publishes how many records are stuck now
 * (`publishStuckCounts`). A record this version cannot read is left out by the store's listings
 * (counted and logged through its `onUndecodable`), so it never stops a sweep.
 *
 * @example
 * ```ts
 * const report = await sweep(context, { pendingGraceMs: 10_000 });
 * ```
 */
export async function sweep(
  context: RelayContext<RelayConfigView>,
  { pendingGraceMs = 0, concurrency = 4, limit = 200, canContinue = () => true, dispatch, digests: digestOptions, canWait = () => false }: SweepOptions = {},
): Promise<SweepReport> {
  const now = context.clock();
  const recovered = await recoverStale(context, now, limit, dispatch !== undefined);
  await checkCircuit(context, canWait);
  // Before the due records are listed: a digest is a new PENDING record (the stream sends it on
  // AWS; locally it is handed to the send queue with the rest).
  const digests = await recordDigests(context, now, digestOptions).catch((error: unknown) => {
    // The retries and recoveries below must not wait on a digest; its records stay DEFERRED for the next run.
    context.logger.error('digests not recorded; the next sweep tries again', { error });
    context.metrics.add(RelayMetric.SweepErrors, 1);
    return { ids: [], digested: 0 };
  });
  dispatch?.(digests.ids);
  // Paging: due escalations and renotifies become PENDING records like a digest (see paging.ts).
  const escalations = await recordEscalations(context, now, digestOptions?.compile === undefined ? {} : { compile: digestOptions.compile }).catch((error: unknown) => {
    context.logger.error('escalations not recorded; the next sweep tries again', { error });
    context.metrics.add(RelayMetric.SweepErrors, 1);
    return { ids: [] };
  });
  dispatch?.(escalations.ids);
  const handoffs = await recordHandoffs(context, now, digestOptions?.compile === undefined ? {} : { compile: digestOptions.compile }).catch((error: unknown) => {
    context.logger.error('handoff SMS not recorded; the next sweep tries again', { error });
    context.metrics.add(RelayMetric.SweepErrors, 1);
    return { ids: [] };
  });
  dispatch?.(handoffs.ids);
  await publishStuckCounts(context, now);
  const dueOptions = { now, limit, ...(pendingGraceMs > 0 ? { updatedBefore: new Date(now.getTime() - pendingGraceMs) } : {}) };
  if (dispatch !== undefined) {
    const backlog = newBacklog(now);
    for await (const page of pages((cursor) => context.store.findDuePending({ ...dueOptions, ...cursor }))) {
      dispatch(page.map((record) => record.id));
      backlog.count(page);
    }
    backlog.publish(context);
    const summaries = await recordHeldSummaries(context, now);
    const heartbeats = await checkHeartbeats(context, now);
    return { sent: {}, recovered, summaries, heartbeats, digests: digests.ids.length, errors: 0, deferred: 0, dispatched: backlog.due };
  }
  const due = await context.store.findDuePending(dueOptions);
  const backlog = newBacklog(now);
  backlog.count(due.items);
  backlog.publish(context);
  const sent: Partial<Record<SendOutcome, number>> = {};
  let errors = 0;
  let deferred = 0;
  await forEachConcurrently(due.items, concurrency, async (record) => {
    if (!canContinue()) {
      deferred += 1;
      return;
    }
    try {
      const outcome = await sendMessage(context, record.id);
      sent[outcome] = (sent[outcome] ?? 0) + 1;
    } catch (error) {
      // One record's failure must not stop the others; its claim (if any) is recovered when stale.
      errors += 1;
      context.logger.error('sweep could not send a record', { id: record.id, route: record.route, error });
    }
  });
  // Counted even when 0, beside the backlog: the alarm reads a sweeper that could not send.
  context.metrics.add(RelayMetric.SweepErrors, errors);
  const summaries = await recordHeldSummaries(context, now);
  // Recorded as PENDING notices: the stream (locally the runtime) sends them, or the next sweep.
  const heartbeats = await checkHeartbeats(context, now);
  return { sent, recovered, summaries, heartbeats, digests: digests.ids.length, errors, deferred };
}

/**
 * The backlog as this sweep finds it, page by page: how many PENDING records are due, and how long
 * the oldest of them has been due (its retry time, else its last change). Published on every run,
 * zeros included, so the backlog alarm sees a backlog that stays rather than one sweep's spike.
 */
function newBacklog(now: Date) {
  let due = 0;
  let oldestMs = 0;
  return {
    get due() {
      return due;
    },
    count(records: readonly MessageRecord[]): void {
      due += records.length;
      for (const record of records) {
        const dueSince = Date.parse(record.nextAttemptAt ?? record.updatedAt);
        if (Number.isFinite(dueSince)) oldestMs = Math.max(oldestMs, now.getTime() - dueSince);
      }
    },
    publish(context: RelayContext<RelayConfigView>): void {
      context.metrics.add(RelayMetric.PendingDue, due);
      context.metrics.add(RelayMetric.OldestPendingAgeSeconds, Math.round(oldestMs / 1000));
    },
  };
}

/**
 * Probes the SMS service when its circuit is open and a probe is due, and publishes
 * `SmsServiceUnreachable` (1 while open, 0 otherwise) on every sweep, so the alarm sees a state that
 * lasts. A store failure here is logged and counted; the rest of the sweep goes on.
 */
async function checkCircuit(context: RelayContext<RelayConfigView>, canWait: (ms: number) => boolean): Promise<void> {
  try {
    let circuit = await probeIfDue(context, await readCircuit(context, { fresh: true }));
    context.metrics.add(RelayMetric.SmsServiceUnreachable, circuit.openedAt === undefined ? 0 : 1);
    while (circuit.openedAt !== undefined) {
      const waitMs = Math.max(0, Date.parse(circuit.nextProbeAt ?? '') - context.clock().getTime() || 0);
      if (!canWait(waitMs)) break;
      await new Promise((resolve) => setTimeout(resolve, waitMs + 1));
      circuit = await probeIfDue(context, await readCircuit(context, { fresh: true }));
    }
  } catch (error) {
    context.logger.error('SMS service circuit not read; the next sweep tries again', { error: error instanceof Error ? error.name : typeof error });
    context.metrics.add(RelayMetric.SweepErrors, 1);
  }
}

/**
 * A record left in SENDING means its sender stopped between the claim and storing the outcome: the
 * SMS may or may not have gone out. At-most-once routes settle it as UNKNOWN; at-least-once routes
 * send it again.
 */
async function recoverStale(context: RelayContext<RelayConfigView>, now: Date, limit: number, all: boolean): Promise<number> {
  const { store, policy, logger } = context;
  const olderThan = new Date(now.getTime() - policy.staleSendingMs);
  const stale: MessageRecord[] = [];
  for await (const page of pages((cursor) => store.findStaleSending({ olderThan, limit, ...cursor }))) {
    stale.push(...page);
    if (!all) break;
  }
  let recovered = 0;
  for (const record of stale) {
    const token = record.claimToken;
    if (token === undefined) continue;
    const lastError = { name: 'SenderStopped', delivery: 'maybe-sent', message: 'the sender stopped while the SMS was being sent' };
    try {
      if (record.delivery === DeliveryPolicy.AtLeastOnce && mayRetry(context, record, now)) {
        await store.settle(record.id, token, { state: MessageState.Pending, nextAttemptAt: now, lastError }, { now });
      } else {
        await store.settle(record.id, token, { state: MessageState.Unknown, reason: 'may have been sent: the sender stopped while sending', lastError }, { now });
        context.metrics.add(RelayMetric.Unknown, 1, record.route);
      }
      recovered += 1;
      logger.warn('recovered a message left in SENDING', { id: record.id, route: record.route, delivery: record.delivery });
      // Its reservation of the projected balance stays taken, as for any send that may have gone out.
      await store.keepStaleCredit({ token }).catch((error: unknown) => logger.error('projected balance not settled for a stale send', { id: record.id, error: (error as Error).name }));
    } catch (error) {
      // A lost claim: the sender finished after all (or another sweep got there first).
      if (error instanceof ClaimLostError) logger.info('stale record settled by its sender meanwhile', { id: record.id, route: record.route });
      // Anything else left it in SENDING: still stale, so the next sweep tries again.
      else logger.error('stale record not settled; the next sweep tries again', { id: record.id, route: record.route, error: error instanceof Error ? error.name : typeof error });
    }
  }
  return recovered;
}

async function recordHeldSummaries(context: RelayContext<RelayConfigView>, now: Date): Promise<number> {
  const { store, config } = context;
  let recorded = 0;
  for (const route of config.routes.values()) {
    if (route.config.limits === undefined) continue;
    const windows = await store.heldSummaryDue({ route: route.id, now });
    if (windows.length === 0) continue;
    const to = literalRecipients(route);
    for (const window of windows) {
      if (to.length > 0) {
        const text = `sms-relay: ${window.held} message${window.held === 1 ? '' : 's'} on route ${route.id} held back by its ${window.limit} limit between ${window.startsAt.slice(0, 16).replace('T', ' ')} and ${window.endsAt.slice(0, 16).replace('T', ' ')} UTC.`;
        await store.recordNotice({ kind: NoticeKind.HeldSummary, route: route.id, key: `${window.limit}:${window.window}`, now, message: noticeMessage(text, to, route.senderId) });
      }
      if (await store.markSummarySent({ route: route.id, window: window.window, now })) recorded += 1;
    }
  }
  return recorded;
}

/** Every page of a cursor-paged listing, in turn. */
async function* pages(read: (cursor: { cursor?: string }) => Promise<{ readonly items: readonly MessageRecord[]; readonly cursor?: string }>): AsyncGenerator<readonly MessageRecord[]> {
  let cursor: string | undefined;
  do {
    const page = await read(cursor === undefined ? {} : { cursor });
    yield page.items;
    cursor = page.cursor;
  } while (cursor !== undefined);
}

async function forEachConcurrently<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await work(item);
    }
  });
  await Promise.all(workers);
}

export type { MessageRecord };
