import { literalRecipients, type RelayConfigView } from '../core/config/view';
import { DeliveryPolicy } from '../core/config/policies';
import { ClaimLostError, MessageState, type MessageRecord, type MessageStore, NoticeKind } from '../store';
import { checkHeartbeats, type HeartbeatReport, type HeartbeatStore } from './heartbeat';
import { noticeMessage } from './notice';
import { RelayMetric, type RelayContext } from './ports';
import { type CircuitStore, probeIfDue, readCircuit } from './circuit';
import { providerScope, sendsThroughChain } from './provider-scope';
import { forEachConcurrently } from './concurrency';
import { mayRetry } from './retry';
import { sendMessage, type SendOutcome, type SenderStore } from './sender';
import { type DigestOptions, type DigestStore, recordDigests } from './digest';
import { type PagingStore, recordEscalations } from './paging';
import { type HandoffStore, recordHandoffs } from './handoff';
import { publishStuckCounts, type StuckGaugesStore } from './gauges';
import { errorName } from './error-name';
import { SWEEP_RUN } from '../core/defaults';
import { Lane } from '../core/lanes';
import { type WakeStore, wakeWaiting } from './wake';

/** What `sweep` uses of the store: its own listings and settlements, and what its steps use. */
export type SweepStore = Pick<
  MessageStore,
  | 'findStaleSending'
  | 'findDuePending'
  | 'settle'
  | 'keepStaleCredit'
  | 'heldSummaryDue'
  | 'recordNotice'
  | 'markSummarySent'
> &
  SenderStore &
  CircuitStore &
  DigestStore &
  PagingStore &
  HandoffStore &
  StuckGaugesStore &
  HeartbeatStore &
  WakeStore;

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
  readonly dispatch?: (ids: readonly string[], lane: Lane) => void;
  /**
   * Wakes the due records (see `./wake`) instead of sending them in the sweep, while the SMS
   * service's circuit is closed: on AWS, where the stream-fed sender sends them at its full rate,
   * each lane on its own mapping. While the circuit is open or on probation the sweep sends (and
   * so probes) as without it; a probe of this sweep that closes it is followed by the wake.
   * @default false
   */
  readonly wake?: boolean;
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
  /**
   * Stay in the run until then for the paging steps that fall due meanwhile: each escalation or
   * renotify is recorded at its due time, while the other steps go on (on AWS, where a run starts
   * once a minute, so a step waits for no run; see `SWEEP_RUN`). Without it (locally, where the
   * runtime records paging steps every second), the steps due at the sweep's start only.
   * @default - no staying
   */
  readonly pagingUntil?: Date;
  /**
   * While staying, the open incidents are read again at least this often (an incident opened since).
   * @default SWEEP_RUN.pagingPollMs
   */
  readonly pagingPollMs?: number;
  /**
   * Called once every step has run, before the run goes on staying for paging steps: the Lambda
   * handler writes its metrics then, so the `Sweeps` heartbeat is not held back until the run ends.
   */
  readonly onStepsDone?: () => void;
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
  /** Due records woken for the stream-fed sender (only with `wake`). */
  readonly woken?: number;
  /** Escalation and renotify records this run recorded, at the start and while it stayed (`pagingUntil`). */
  readonly escalations: number;
  /** Sweep steps that failed (each logged with its name and counted in `SweepErrors`); the others ran. */
  readonly failedSteps: readonly string[];
}

/**
 * Paging's clock and the safety net behind the stream-fed sender, run on a schedule: the paging
 * step ({@link PAGING_STEP}) first, then the list of {@link SWEEP_STEPS}, in turn. That list is
 * what a sweep does (each step's own TSDoc says how); it is not repeated elsewhere. The one error
 * policy ({@link runStep}): a step that throws is logged with its name and counted in `SweepErrors`,
 * and the next still runs. A record this version cannot read is left out by the store's listings
 * (counted and logged through its `onUndecodable`), so it never stops a sweep. With `pagingUntil`,
 * the run then stays for the paging steps due before it.
 * Publishes `Sweeps` (1) once the steps have run: the heartbeat the `SweeperNotRunning` alarm reads.
 *
 * @example
 * ```ts
 * const report = await sweep(context, { pendingGraceMs: 10_000 });
 * ```
 */
export async function sweep(
  context: RelayContext<RelayConfigView, SweepStore>,
  options: SweepOptions = {},
): Promise<SweepReport> {
  const run: SweepRun = {
    context,
    now: context.clock(),
    options: {
      ...options,
      pendingGraceMs: options.pendingGraceMs ?? 0,
      concurrency: options.concurrency ?? 4,
      limit: options.limit ?? 200,
      canContinue: options.canContinue ?? (() => true),
      canWait: options.canWait ?? (() => false),
    },
    report: {
      sent: {},
      recovered: 0,
      summaries: 0,
      heartbeats: { silent: 0, back: 0 },
      digests: 0,
      errors: 0,
      deferred: 0,
      escalations: 0,
      failedSteps: [],
    },
  };
  await runStep(run, PAGING_STEP.name, PAGING_STEP.step);
  // Alongside the other steps: a send backlog must not hold back a page due meanwhile.
  const staying = stayForPaging(run);
  for (const [name, step] of Object.entries(SWEEP_STEPS)) await runStep(run, name, step);
  context.metrics.add(RelayMetric.Sweeps, 1);
  options.onStepsDone?.();
  await staying;
  return run.report;
}

/** The one error policy of sweep steps: a step that throws is logged with its name and counted; the next runs. */
async function runStep(run: SweepRun, name: string, step: SweepStep): Promise<void> {
  try {
    await step(run);
  } catch (error) {
    run.report.failedSteps = [...run.report.failedSteps, name];
    run.context.metrics.add(RelayMetric.SweepErrors, 1);
    run.context.logger.error(`sweep step "${name}" failed; the next sweep runs it again`, {
      step: name,
      error: errorName(error),
    });
  }
}

/**
 * The run staying for its paging steps (`pagingUntil`): sleeps until the next step due (at most
 * `pagingPollMs`, to see incidents opened since), records it, and again, until `pagingUntil`, or
 * until no open incident has a step to come: a run with nothing to wait for ends (an incident opened
 * after that has its first step at least a minute later, when the next run is there). An incident
 * whose step failed is left to the next sweep (it was counted in `EscalationErrors`).
 */
async function stayForPaging(run: SweepRun): Promise<void> {
  const { context, options } = run;
  const until = options.pagingUntil?.getTime();
  if (until === undefined) return;
  const pollMs = options.pagingPollMs ?? SWEEP_RUN.pagingPollMs;
  const failed = new Set<string>();
  for (;;) {
    const now = context.clock();
    if (now.getTime() >= until) return;
    let wakeAt = Math.min(until, now.getTime() + pollMs);
    try {
      const report = await recordEscalations(context, now, { ...compileOption(options), gauges: false, skip: failed });
      for (const id of report.failed) failed.add(id);
      run.report.escalations += report.ids.length;
      options.dispatch?.(report.ids, Lane.Critical);
      // Nothing falls due before the stay ends: the next run, already started by then, takes it.
      if (report.nextDueAt === undefined || report.nextDueAt.getTime() > until) return;
      wakeAt = Math.min(wakeAt, report.nextDueAt.getTime());
    } catch (error) {
      run.context.metrics.add(RelayMetric.SweepErrors, 1);
      run.context.logger.error('sweep step "escalations" failed while staying for due steps; trying again', {
        step: 'escalations',
        error: errorName(error),
      });
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wakeAt - context.clock().getTime())));
  }
}

const compileOption = (options: SweepOptions) =>
  options.digests?.compile === undefined ? {} : { compile: options.digests.compile };

/** One sweep as its steps see it: the relay, the sweep's one reading of the clock, its options and the report they fill in. */
export interface SweepRun {
  readonly context: RelayContext<RelayConfigView, SweepStore>;
  readonly now: Date;
  readonly options: SweepOptions &
    Required<Pick<SweepOptions, 'pendingGraceMs' | 'concurrency' | 'limit' | 'canContinue' | 'canWait'>>;
  readonly report: { -readonly [K in keyof SweepReport]: SweepReport[K] };
}

/**
 * One step of a sweep. A step that throws is logged with its name and counted in `SweepErrors`,
 * and the sweep goes on with the next (see `sweep`); a step handles its own failures only where
 * part of its own work must go on (one record of many).
 */
export type SweepStep = (run: SweepRun) => Promise<void>;

/**
 * A step that records new PENDING records (a digest, an escalation): their ids go to `dispatch`
 * (locally the send queue; on AWS the stream sends them). What was not recorded stays due for the
 * next run.
 *
 * @example
 * ```ts
 * const recordDueHandoffs = recordingStep(({ context, now }) => recordHandoffs(context, now), Lane.Critical);
 * ```
 */
export function recordingStep(
  record: (run: SweepRun) => Promise<{ readonly ids: readonly string[] }>,
  lane: Lane,
): SweepStep {
  return async (run) => {
    const { ids } = await record(run);
    run.options.dispatch?.(ids, lane);
  };
}

/** SENDING records whose sender died: UNKNOWN on at-most-once routes, sent again on at-least-once ones (see `recoverStale`). */
const recoverStaleSends: SweepStep = async (run) => {
  run.report.recovered = await recoverStale(
    run.context,
    run.now,
    run.options.limit,
    run.options.dispatch !== undefined,
  );
};

/** While the SMS service is unreachable: probes it when a probe is due, and closes the circuit when it answers (see circuit.ts). */
const probeCircuit: SweepStep = async ({ context, options }) => await checkCircuit(context, options.canWait);

/**
 * One digest SMS per route and ended quiet period or digest window. Before the due records are
 * listed: a digest is a new PENDING record (the stream sends it on AWS; locally it is handed to the
 * send queue with the rest).
 */
const recordDueDigests = recordingStep(async ({ context, now, options, report }) => {
  const digests = await recordDigests(context, now, options.digests);
  report.digests = digests.ids.length;
  return digests;
  // What a window held back is never urgent (a critical route has no quiet hours); on AWS the
  // record's own lane applies.
}, Lane.Bulk);

/** Paging: due escalations and renotifies become PENDING records like a digest (see paging.ts). */
const recordDueEscalations = recordingStep(async ({ context, now, options, report }) => {
  const escalations = await recordEscalations(context, now, compileOption(options));
  report.escalations += escalations.ids.length;
  return escalations;
}, Lane.Critical);

/** On-call handoffs (`notifyHandoff: true`): the incoming person's SMS, once per shift (see handoff.ts). */
const recordDueHandoffs = recordingStep(
  async ({ context, now, options }) => await recordHandoffs(context, now, compileOption(options)),
  Lane.Critical,
);

/** The gauges of records stuck now (waiting, held, parked, unknown…), capped (see gauges.ts): what the alarms read. */
const publishStuck: SweepStep = async ({ context, now }) => await publishStuckCounts(context, now);

/** The due PENDING records: handed to `dispatch` page by page when there is one, woken with `wake`, else sent here. */
const sendDue: SweepStep = async (run) => {
  if (run.options.dispatch !== undefined) return await dispatchDue(run, run.options.dispatch);
  if (run.options.wake === true) return await wakeDue(run);
  return await sendDueHere(run);
};

/** One summary SMS per route window in which a limit held messages back. */
const recordSummaries: SweepStep = async (run) => {
  run.report.summaries = await recordHeldSummaries(run.context, run.now);
};

/** The routes' dead-man's switches (`heartbeat`): one SMS when a route falls silent, one when it resumes, recorded as PENDING notices. */
const runHeartbeats: SweepStep = async (run) => {
  run.report.heartbeats = await checkHeartbeats(run.context, run.now);
};

/** The sweep's first step: a page that is due must not wait behind the other steps, nor fail with them. */
export const PAGING_STEP = { name: 'escalations', step: recordDueEscalations } as const;

/** What a sweep does after {@link PAGING_STEP}, in order, by the name its errors are logged with; adding a step is one line here. */
export const SWEEP_STEPS = {
  'stale sends': recoverStaleSends,
  circuit: probeCircuit,
  digests: recordDueDigests,
  'handoff SMS': recordDueHandoffs,
  'stuck counts': publishStuck,
  'due sends': sendDue,
  'held summaries': recordSummaries,
  heartbeats: runHeartbeats,
} as const satisfies Record<string, SweepStep>;

function dueOptions({ now, options: { limit, pendingGraceMs } }: SweepRun) {
  return { now, limit, ...(pendingGraceMs > 0 ? { updatedBefore: new Date(now.getTime() - pendingGraceMs) } : {}) };
}

async function dispatchDue(run: SweepRun, dispatch: NonNullable<SweepOptions['dispatch']>): Promise<void> {
  const backlog = newBacklog(run.now);
  for await (const page of pages((cursor) => run.context.store.findDuePending({ ...dueOptions(run), ...cursor }))) {
    for (const lane of [Lane.Critical, Lane.Bulk])
      dispatch(
        page.filter((record) => record.lane === lane).map((record) => record.id),
        lane,
      );
    backlog.count(page);
  }
  backlog.publish(run.context);
  run.report.dispatched = backlog.due;
}

/**
 * With `wake`: while the circuit is closed, every due record is woken for the stream-fed sender
 * (and the few the stream did not take are sent here); while it is open or on probation, the first
 * page is sent here, which carries the probation's trial sends, and should that close it, the rest
 * is woken in the same run.
 */
async function wakeDue(run: SweepRun): Promise<void> {
  const { context } = run;
  if (!(await circuitClosed(context))) {
    await sendDueHere(run);
    if (!(await circuitClosed(context))) return;
  }
  const backlog = newBacklog(run.now);
  const { woken, unclaimed } = await wakeWaiting(context, {
    ...dueOptions(run),
    canContinue: run.options.canContinue,
    onPage: (records) => backlog.count(records),
  });
  backlog.publish(context);
  run.report.woken = (run.report.woken ?? 0) + woken;
  if (woken > 0) context.logger.info('waiting records handed to the sender', { woken });
  await sendHere(run, unclaimed);
}

/**
 * Whether the SMS service's circuit is closed and off probation: every send may go. With several
 * providers, whether one of them is: a record whose first provider is out fails over to it.
 */
async function circuitClosed(context: RelayContext<RelayConfigView, SweepStore>): Promise<boolean> {
  for (const scope of await providerScopes(context)) {
    const circuit = await readCircuit(scope, { fresh: true });
    if (circuit.openedAt === undefined && circuit.probationSince === undefined) return true;
  }
  return false;
}

/**
 * The context of each provider the config sends through, each with its own circuit (see
 * `providerScope`); one config of one `sms-service` provider: the context itself. A provider that
 * cannot be created (its key missing) is left out: it is no way out, and nothing can probe it.
 */
async function providerScopes(
  context: RelayContext<RelayConfigView, SweepStore>,
): Promise<RelayContext<RelayConfigView, SweepStore>[]> {
  const { providers } = context;
  if (providers === undefined || !sendsThroughChain(context.config.settings)) return [context];
  const scopes = await Promise.all(
    providers.routing.names.map(async (name) =>
      providers
        .get(name)
        .then((provider) => providerScope(context, provider))
        .catch(() => undefined),
    ),
  );
  return scopes.filter((scope) => scope !== undefined);
}

async function sendDueHere(run: SweepRun): Promise<void> {
  const due = await run.context.store.findDuePending(dueOptions(run));
  const backlog = newBacklog(run.now);
  backlog.count(due.items);
  backlog.publish(run.context);
  await sendHere(run, due.items);
}

/** Sends `records` in the sweep, `concurrency` at a time, while `canContinue`. */
async function sendHere(run: SweepRun, records: readonly MessageRecord[]): Promise<void> {
  const {
    context,
    options: { concurrency, canContinue },
    report,
  } = run;
  await forEachConcurrently(records, concurrency, async (record) => {
    if (!canContinue()) {
      report.deferred += 1;
      return;
    }
    try {
      const outcome = await sendMessage(context, record.id);
      report.sent[outcome] = (report.sent[outcome] ?? 0) + 1;
    } catch (error) {
      // One record's failure must not stop the others; its claim (if any) is recovered when stale.
      report.errors += 1;
      context.logger.error('sweep could not send a record', { id: record.id, route: record.route, error });
    }
  });
  // Counted even when 0, beside the backlog: the alarm reads a sweeper that could not send.
  context.metrics.add(RelayMetric.SweepErrors, report.errors);
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
    publish(context: RelayContext<RelayConfigView, SweepStore>): void {
      context.metrics.add(RelayMetric.PendingDue, due);
      context.metrics.add(RelayMetric.OldestPendingAgeSeconds, Math.round(oldestMs / 1000));
    },
  };
}

/**
 * Probes each provider whose circuit is open when its probe is due, and publishes
 * `SmsServiceUnreachable` for each (1 while open, 0 otherwise) on every sweep, so the alarm sees a
 * state that lasts. Providers are probed side by side: one that stays down never holds back the
 * probe of another. A store failure here is logged and counted; the rest of the sweep goes on.
 */
async function checkCircuit(
  context: RelayContext<RelayConfigView, SweepStore>,
  canWait: (ms: number) => boolean,
): Promise<void> {
  try {
    await Promise.all((await providerScopes(context)).map(async (scope) => await probeUntilClosed(scope, canWait)));
  } catch (error) {
    context.logger.error('SMS service circuit not read; the next sweep tries again', {
      error: error instanceof Error ? error.name : typeof error,
    });
    context.metrics.add(RelayMetric.SweepErrors, 1);
  }
}

/** One provider's probes: while its circuit stays open and the sweep can wait for the next probe. */
async function probeUntilClosed(
  scope: RelayContext<RelayConfigView, SweepStore>,
  canWait: (ms: number) => boolean,
): Promise<void> {
  let circuit = await probeIfDue(scope, await readCircuit(scope, { fresh: true }));
  scope.metrics.add(RelayMetric.SmsServiceUnreachable, circuit.openedAt === undefined ? 0 : 1);
  while (circuit.openedAt !== undefined) {
    const waitMs = Math.max(0, Date.parse(circuit.nextProbeAt ?? '') - scope.clock().getTime() || 0);
    if (!canWait(waitMs)) break;
    await new Promise((resolve) => setTimeout(resolve, waitMs + 1));
    circuit = await probeIfDue(scope, await readCircuit(scope, { fresh: true }));
  }
}

/**
 * A record left in SENDING means its sender stopped between the claim and storing the outcome: the
 * SMS may or may not have gone out. At-most-once routes settle it as UNKNOWN; at-least-once routes
 * send it again.
 */
async function recoverStale(
  context: RelayContext<RelayConfigView, SweepStore>,
  now: Date,
  limit: number,
  all: boolean,
): Promise<number> {
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
    const lastError = {
      name: 'SenderStopped',
      delivery: 'maybe-sent',
      message: 'the sender stopped while the SMS was being sent',
    };
    try {
      if (record.delivery === DeliveryPolicy.AtLeastOnce && mayRetry(context, record, now)) {
        await store.settle(record.id, token, { state: MessageState.Pending, nextAttemptAt: now, lastError }, { now });
      } else {
        await store.settle(
          record.id,
          token,
          { state: MessageState.Unknown, reason: 'may have been sent: the sender stopped while sending', lastError },
          { now },
        );
        context.metrics.add(RelayMetric.Unknown, 1, record.route);
      }
      recovered += 1;
      logger.warn('recovered a message left in SENDING', {
        id: record.id,
        route: record.route,
        delivery: record.delivery,
      });
      // Its reservation of the projected balance stays taken, as for any send that may have gone out.
      await store.keepStaleCredit({ token }).catch((error: unknown) =>
        logger.error('projected balance not settled for a stale send', {
          id: record.id,
          error: (error as Error).name,
        }),
      );
    } catch (error) {
      // A lost claim: the sender finished after all (or another sweep got there first).
      if (error instanceof ClaimLostError)
        logger.info('stale record settled by its sender meanwhile', { id: record.id, route: record.route });
      // Anything else left it in SENDING: still stale, so the next sweep tries again.
      else
        logger.error('stale record not settled; the next sweep tries again', {
          id: record.id,
          route: record.route,
          error: error instanceof Error ? error.name : typeof error,
        });
    }
  }
  return recovered;
}

async function recordHeldSummaries(context: RelayContext<RelayConfigView, SweepStore>, now: Date): Promise<number> {
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
        await store.recordNotice({
          kind: NoticeKind.HeldSummary,
          route: route.id,
          key: `${window.limit}:${window.window}`,
          now,
          message: noticeMessage(text, to, route.senderId),
        });
      }
      if (await store.markSummarySent({ route: route.id, window: window.window, now })) recorded += 1;
    }
  }
  return recorded;
}

/** Every page of a cursor-paged listing, in turn. */
async function* pages(
  read: (cursor: {
    cursor?: string;
  }) => Promise<{ readonly items: readonly MessageRecord[]; readonly cursor?: string }>,
): AsyncGenerator<readonly MessageRecord[]> {
  let cursor: string | undefined;
  do {
    const page = await read(cursor === undefined ? {} : { cursor });
    yield page.items;
    cursor = page.cursor;
  } while (cursor !== undefined);
}

export type { MessageRecord };
