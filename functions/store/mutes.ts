import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { MAX_MUTE_REASON_CHARS, MAX_MUTE_SECONDS, MUTE_KNOWN_MS } from '../core/defaults';
import { type Item, ItemReader, num, str } from './attributes';
import type { StoreTable } from './store-table';
import { StoreError } from './errors';
import { buildUpdate } from './expressions';
import { epochSeconds, ItemKind, muteKey, muteSk, MUTES_PK } from './keys';
import { queryAll } from './range';
import { TABLE } from './table';
import { writeIf } from './write';

/** A route's mute: its messages are recorded `DROPPED` until `until`, then it lapses by itself. */
export interface Mute {
  readonly route: string;
  /** ISO-8601 UTC. */
  readonly until: string;
  readonly reason: string;
  readonly mutedAt: string;
}

/** What `muteRoute` sets. */
export interface MuteInput {
  readonly route: string;
  /** How long from `now`, in seconds (at least 1). */
  readonly forSeconds: number;
  readonly reason: string;
  readonly now?: Date;
}

/** A lapsed mute item is kept this long after `until` (TTL): long enough to read why a route was silent yesterday. */
const LAPSED_MUTE_KEPT_SECONDS = 86_400;

/**
 * Mutes a route from `now` for `forSeconds`: one item per route, so a second mute replaces the
 * first (the newer `until` and reason win, as an operator who mutes again means). Written through
 * the store's conditional write without a condition: the last writer wins.
 *
 * @example
 * ```typescript
 * await store.muteRoute({ route: 'alerts', forSeconds: 7200, reason: 'db upgrade' });
 * ```
 */
export const muteRoute = async (
  table: StoreTable,
  { route, forSeconds, reason, now = table.clock() }: MuteInput,
): Promise<Mute> => {
  if (!Number.isInteger(forSeconds) || forSeconds < 1 || forSeconds > MAX_MUTE_SECONDS) {
    throw new StoreError(`a mute lasts from 1 s to ${MAX_MUTE_SECONDS / 86_400} days, got ${forSeconds} s`);
  }
  if (reason.length > MAX_MUTE_REASON_CHARS)
    throw new StoreError(`a mute's reason is at most ${MAX_MUTE_REASON_CHARS} characters, got ${reason.length}`);
  const until = new Date(now.getTime() + forSeconds * 1000);
  const mute: Mute = { route, until: until.toISOString(), reason: reason.trim(), mutedAt: now.toISOString() };
  await writeIf(table, {
    Item: {
      ...muteKey(route),
      kind: str(ItemKind.Mute),
      route: str(route),
      until: str(mute.until),
      reason: str(mute.reason),
      mutedAt: str(mute.mutedAt),
      [TABLE.timeToLive]: num(epochSeconds(until) + LAPSED_MUTE_KEPT_SECONDS),
    },
  });
  knownMutes.get(table)?.delete(route);
  return mute;
};

/**
 * Ends a route's mute now. `true` when there was one in force; a lapsed or absent mute is left as
 * it is and gives `false`.
 */
export const unmuteRoute = async (
  table: StoreTable,
  { route, now = table.clock() }: { readonly route: string; readonly now?: Date },
): Promise<boolean> => {
  // The mute lapses now rather than being deleted: the item keeps when and why until its TTL.
  const outcome = await writeIf(table, {
    Key: muteKey(route),
    ...buildUpdate({
      set: { until: str(now.toISOString()), unmutedAt: str(now.toISOString()) },
      condition: '#until > :now',
      values: { ':now': str(now.toISOString()) },
    }),
  });
  knownMutes.get(table)?.delete(route);
  return outcome.applied;
};

const readMute = (item: Item | undefined, now: Date): Mute | undefined => {
  if (item === undefined) return undefined;
  const read = new ItemReader(item, MUTES_PK);
  const until = read.str('until');
  // TTL deletes items some time after they expire: a lapsed mute still in the table is no mute.
  if (until <= now.toISOString()) return undefined;
  return {
    route: read.str('route'),
    until,
    reason: read.optStr('reason') ?? '',
    mutedAt: read.optStr('mutedAt') ?? until,
  };
};

/**
 * The mute in force on a route now, if any. One eventually consistent read (half a read unit): it is
 * made once per webhook and once per send, and a mute set a second ago may be missed by one message.
 */
export const getMute = async (
  table: StoreTable,
  {
    route,
    now = table.clock(),
    consistent = false,
  }: { readonly route: string; readonly now?: Date; readonly consistent?: boolean },
): Promise<Mute | undefined> => {
  const known = consistent ? undefined : knownMutes.get(table)?.get(route);
  if (known !== undefined && Date.now() - known.readAt < MUTE_KNOWN_MS) return readMute(known.item, now);
  const { Item: item } = await table.client.send(
    new GetItemCommand({ TableName: table.tableName, Key: muteKey(route), ConsistentRead: consistent }),
  );
  mutesOf(table).set(route, { item, readAt: Date.now() });
  return readMute(item, now);
};

/**
 * The mute items this process read lately, by table and route, so a webhook does not cost a read
 * of its route's mute: a mute set elsewhere (the CLI against a deployed stack) applies within
 * {@link MUTE_KNOWN_MS}; one set through this store applies at once. Whether it is in force is
 * judged at each use, by the caller's clock.
 */
const knownMutes = new WeakMap<StoreTable, Map<string, { readonly item: Item | undefined; readonly readAt: number }>>();

const mutesOf = (table: StoreTable): Map<string, { readonly item: Item | undefined; readonly readAt: number }> => {
  let mutes = knownMutes.get(table);
  if (mutes === undefined) knownMutes.set(table, (mutes = new Map()));
  return mutes;
};

/** Every mute in force now (all routes, or the routes given), by route id. One Query of one partition. */
export const listMutes = async (
  table: StoreTable,
  { routes, now = table.clock() }: { readonly routes?: readonly string[]; readonly now?: Date } = {},
): Promise<Mute[]> => {
  const wanted = routes === undefined ? undefined : new Set(routes);
  const items = await queryAll(table, MUTES_PK, muteSk(''), muteSk('\uffff'), {
    expression: '#until > :now',
    names: { '#until': 'until' },
    values: { ':now': str(now.toISOString()) },
  });
  return items
    .flatMap((item) => readMute(item, now) ?? [])
    .filter((mute) => wanted === undefined || wanted.has(mute.route))
    .sort((a, b) => (a.route < b.route ? -1 : a.route > b.route ? 1 : 0));
};

/**
 * Route mutes: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const muteOperations = (table: StoreTable) => ({
  /** Mutes a route for a while: its messages are recorded `DROPPED` until then. See {@link muteRoute}. */
  muteRoute: async (input: MuteInput): Promise<Mute> => await muteRoute(table, input),
  /** Ends a route's mute now; `false` when none was in force. */
  unmuteRoute: async (input: { readonly route: string; readonly now?: Date }): Promise<boolean> =>
    await unmuteRoute(table, input),
  /** The mute in force on a route, if any. See {@link getMute}. */
  getMute: async (input: {
    readonly route: string;
    readonly now?: Date;
    readonly consistent?: boolean;
  }): Promise<Mute | undefined> => await getMute(table, input),
  /** The mutes in force, by route id (all routes, or those given). See {@link listMutes}. */
  listMutes: async (input?: { readonly routes?: readonly string[]; readonly now?: Date }): Promise<Mute[]> =>
    await listMutes(table, input),
});
