import type { CompiledRoute, LoadedConfig } from '../core/config/compile';
import { literalRecipients, type RelayConfigView, type RouteView } from '../core/config/view';
import { DIGEST } from '../core/defaults';
import { clockTime, spokenDuration } from '../core/local-time';
import { reasonTime } from '../core/time-format';
import { type Deferral, type DigestScope, quietUntil } from '../core/windows';
import { AcceptOutcome, type MessageRecord, type MessageStore } from '../store';
import { mutedReason } from './mutes';
import { noticeMessage } from './notice';
import { RelayMetric, type RelayContext } from './ports';

/** What digests (`deferralOf`, `recordDigests`) use of the store. */
export type DigestStore = Pick<
  MessageStore,
  | 'getMute'
  | 'openDigestWindow'
  | 'findDueDeferred'
  | 'getMessage'
  | 'markDigested'
  | 'dropDeferred'
  | 'moveToWindow'
  | 'acceptWebhook'
>;

/**
 * Whether a message the route accepts at `at` waits for a digest, and until when: to the end of
 * the quiet period it falls in, else to the end of the route's digest window (opened by this
 * message when none is open: a store write), or, when that window ends in quiet hours, to their
 * end: its records join the quiet period's digest, so nothing goes out during them. `undefined`:
 * send it now.
 *
 * @example
 * ```ts
 * const deferral = await deferralOf(context, route, request.receivedAt); // { until: 07:00, reason: 'quiet hours until 07:00 …' }
 * ```
 */
export async function deferralOf(
  context: RelayContext<RelayConfigView, DigestStore>,
  route: RouteView,
  at: Date,
): Promise<Deferral | undefined> {
  const { quietHours, digest, timeZone } = route.config;
  if (quietHours !== undefined) {
    const until = quietUntil(at, quietHours, timeZone);
    if (until !== undefined)
      return { until, reason: `quiet hours until ${reasonTime(until, timeZone, at)}: goes out in the route's digest` };
  }
  if (digest === undefined) return undefined;
  const closesAt = await context.store.openDigestWindow({ route: route.id, windowSeconds: digest.window, now: at });
  const quietEnd = quietHours === undefined ? undefined : quietUntil(closesAt, quietHours, timeZone);
  if (quietEnd !== undefined)
    return {
      until: quietEnd,
      reason: `digest window, then quiet hours until ${reasonTime(quietEnd, timeZone, at)}: goes out in the route's digest`,
    };
  return {
    until: closesAt,
    reason: `digest window until ${reasonTime(closesAt, timeZone, at)}: goes out in the route's digest`,
  };
}

/** Options of {@link recordDigests}. */
export interface DigestOptions {
  /**
   * A window is digested this long after it ends, so an accept that joined it just before has
   * written its records.
   * @default DIGEST.graceMs
   */
  readonly graceMs?: number;
  /**
   * The compiled config, for the digest templates, where the context's is a view without templates
   * (the Lambda sweeper loads the compiler only when a digest is due).
   */
  readonly compile?: () => Promise<LoadedConfig>;
}

/** What {@link recordDigests} did: the digest records written (now PENDING, for the sender). */
export interface DigestReport {
  readonly ids: readonly string[];
  /** DEFERRED records now DIGESTED. */
  readonly digested: number;
  /** DEFERRED records now DROPPED: their route was muted when their digest fell due. */
  readonly dropped: number;
}

/**
 * Records one digest SMS per route and ended window: the DEFERRED records whose window has ended
 * (plus the grace), by route and window, are rendered into one text with the
 * route's digest template, fitted to one SMS and recorded as a normal PENDING message to the
 * route's literal recipients (the sender claims, reserves, sends and settles it like any other);
 * then each record it stands for moves to DIGESTED with the digest's id. A route muted when its
 * window ends gets no digest: the window's records are DROPPED with the mute's reason, as its new
 * messages are (a mute drops, it does not postpone).
 *
 * Exactly one digest per route and window however many sweepers run: the digest is accepted under
 * the dedupe key `digest:<window end>`, so a second sweeper's accept is a duplicate that returns the
 * first one's id, and it marks only the records that digest lists (`digestOf`). A record it does not
 * list (written after the first sweeper read the window) moves to the next millisecond's window,
 * which every sweeper computes alike, and goes out in that window's digest. Everything is in the
 * table: a sweeper that stops half-way leaves DEFERRED records that the next run picks up.
 *
 * @example
 * ```ts
 * const { ids } = await recordDigests(context, now);
 * ```
 */
export async function recordDigests(
  context: RelayContext<RelayConfigView, DigestStore>,
  now: Date,
  { graceMs = DIGEST.graceMs, compile }: DigestOptions = {},
): Promise<DigestReport> {
  const ids: string[] = [];
  let digested = 0;
  let dropped = 0;
  let compiled: ReadonlyMap<string, CompiledRoute> | undefined;
  // One query for every route: locally it is a scan, and a route whose digest settings were removed
  // still has its DEFERRED records sent (with the default template).
  const records = await context.store.findDueDeferred({
    now: new Date(now.getTime() - graceMs),
    limit: DIGEST.scanLimit,
  });
  for (const window of byWindow(records)) {
    compiled ??= isCompiled(context.config) ? context.config.routes : (await compile?.())?.routes;
    if (compiled === undefined)
      throw new Error('digests need the compiled config (its templates): pass digests.compile to the sweep');
    const route = compiled.get(window.route);
    if (route?.digestTemplate === undefined) {
      // A route removed from the config: its records wait (DEFERRED) for the route to come back.
      context.logger.warn('deferred records of a route that is not in the config', {
        route: window.route,
        count: window.records.length,
      });
      continue;
    }
    // Read from the table, not the process's copy: the sweeper has no fresher read of it.
    const mute = await context.store.getMute({ route: route.id, now, consistent: true });
    if (mute !== undefined) {
      dropped += await dropWindow(context, window, mutedReason(route, mute, now), now);
      continue;
    }
    if (literalRecipients(route).length === 0) {
      context.logger.warn('deferred records of a route without literal recipients: nobody to send their digest to', {
        route: window.route,
        count: window.records.length,
      });
      continue;
    }
    const outcome = await recordDigest(context, route, window, now);
    if (outcome.id !== undefined) ids.push(outcome.id);
    digested += outcome.digested;
  }
  return { ids, digested, dropped };
}

/** One route's window: its end (the records' `nextAttemptAt`) and its records, oldest first. */
interface Window {
  readonly route: string;
  readonly until: string;
  readonly records: readonly MessageRecord[];
}

/** The records by route and window, each window's cut to `DIGEST.maxMessages` (the rest wait for the next sweep, and the next digest). */
function byWindow(records: readonly MessageRecord[]): Window[] {
  const windows = new Map<string, Window & { records: MessageRecord[] }>();
  for (const record of records) {
    const key = `${record.route}\n${record.nextAttemptAt!}`;
    let window = windows.get(key);
    if (window === undefined)
      windows.set(key, (window = { route: record.route, until: record.nextAttemptAt!, records: [] }));
    if (window.records.length < DIGEST.maxMessages) window.records.push(record);
  }
  return [...windows.values()].sort((a, b) => a.until.localeCompare(b.until) || a.route.localeCompare(b.route));
}

/** Drops a muted route's window: each record DROPPED with the mute's reason, none sent. */
async function dropWindow(
  { store, logger, metrics }: RelayContext<RelayConfigView, DigestStore>,
  { route, until, records }: Window,
  reason: string,
  now: Date,
): Promise<number> {
  let dropped = 0;
  for (const record of records)
    if ((await store.dropDeferred(record.id, { until, reason, now })) !== undefined) dropped += 1;
  metrics.add(RelayMetric.Muted, dropped, route);
  logger.info('digest not sent: the route is muted', { route, count: dropped, window: until, reason });
  return dropped;
}

async function recordDigest(
  context: RelayContext<RelayConfigView, DigestStore>,
  route: CompiledRoute,
  { until, records }: Window,
  now: Date,
): Promise<{ id: string | undefined; digested: number }> {
  const { store, logger, metrics } = context;
  const scope = digestScope(route, until, records);
  const { text } = route.engine.render(route.digestTemplate!, { ...scope }, { trackMissing: false });
  const fitted = noticeMessage(
    text.trim() === '' ? `${scope.count} messages ${scope.window}` : text,
    literalRecipients(route),
    route.senderId,
  );
  const accepted = await store.acceptWebhook({
    route: route.id,
    dedupeKey: `digest:${until}`,
    windowSeconds: DIGEST.dedupeSeconds,
    messages: [{ ...fitted, delivery: route.config.delivery, digestOf: records.map((record) => record.id) }],
    priority: route.config.priority,
    now,
    retentionDays: context.config.settings.retentionDays,
  });
  const digestId = accepted.ids[0]!;
  // A second sweeper (or a retry after a crash) marks what the recorded digest lists, not what it read.
  const included = new Set(
    accepted.outcome === AcceptOutcome.Accepted
      ? records.map((record) => record.id)
      : ((await store.getMessage(digestId))?.digestOf ?? []),
  );
  let digested = 0;
  for (const record of records) {
    if (included.has(record.id)) {
      if ((await store.markDigested(record.id, { digestId, until, now })) !== undefined) digested += 1;
    } else {
      await store.moveToWindow(record.id, { from: until, to: new Date(Date.parse(until) + 1).toISOString(), now });
    }
  }
  if (accepted.outcome === AcceptOutcome.Accepted) {
    metrics.add(RelayMetric.Digests, 1, route.id);
    logger.info('digest recorded', {
      route: route.id,
      id: digestId,
      count: records.length,
      window: until,
      segments: fitted.segments,
    });
    return { id: digestId, digested };
  }
  return { id: undefined, digested };
}

/** The digest template's variables for one window's records (oldest first). */
export function digestScope(route: RouteView, until: string, records: readonly MessageRecord[]): DigestScope {
  return {
    count: records.length,
    messages: records.map((record) => record.text),
    first: records[0]!.createdAt,
    last: records.at(-1)!.createdAt,
    route: route.id,
    window: windowPhrase(route, new Date(until)),
  };
}

/** `since 22:00` for a quiet period (the window ends where quiet hours end), else `in 10 min`. */
function windowPhrase(route: RouteView, until: Date): string {
  const { quietHours, digest, timeZone } = route.config;
  if (
    quietHours !== undefined &&
    quietUntil(new Date(until.getTime() - 1), quietHours, timeZone)?.getTime() === until.getTime()
  )
    return `since ${quietHours.from}`;
  return digest === undefined ? `until ${clockTime(until, timeZone)}` : `in ${spokenDuration(digest.window)}`;
}

function isCompiled(config: RelayConfigView): config is LoadedConfig {
  for (const route of config.routes.values()) if (!('engine' in route)) return false;
  return true;
}
