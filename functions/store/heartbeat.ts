import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ItemReader, str } from './attributes';
import type { StoreTable } from './store-table';
import { buildUpdate, type UpdateSpec } from './expressions';
import { heartbeatKey, ItemKind, routeStatePk } from './keys';
import { writeIf } from './write';

/**
 * A route's dead-man's switch as the table holds it: one item per route. Absent attributes read
 * as not yet: a route never seen and never armed has neither `lastSeenAt` nor `armedAt`.
 */
export interface HeartbeatState {
  /** The last authenticated webhook, to within the touch interval (see `touchHeartbeat`). */
  readonly lastSeenAt?: string;
  /** When the sweeper first looked at the route: the silence of a route never heard from counts from here. */
  readonly armedAt?: string;
  /** Set while the route is reported silent: the last webhook (or `armedAt`) before the silence. */
  readonly silentSince?: string;
  /** The silence's SMS is recorded. */
  readonly silentNotified?: boolean;
  /** Set from the end of a silence until its "back" SMS is recorded: the silence's `silentSince`. */
  readonly backSince?: string;
  /** The first webhook after that silence (to within the touch interval). */
  readonly backSeenAt?: string;
}

const update = async (table: StoreTable, route: string, spec: UpdateSpec): Promise<boolean> =>
  (
    await writeIf(table, {
      Key: heartbeatKey(route),
      ...buildUpdate({ ...spec, set: { kind: str(ItemKind.Heartbeat), route: str(route), ...spec.set } }),
    })
  ).applied;

/**
 * Records that an authenticated webhook arrived on a route, at most once per `intervalMs`: the
 * write is conditional on the stored `lastSeenAt` being older than that, so a busy route costs one
 * write per interval however many webhooks it gets (a refused conditional write still costs a
 * write unit; the caller keeps its own last write per process to skip most of those too).
 *
 * @returns whether it wrote.
 */
export const touchHeartbeat = async (
  table: StoreTable,
  {
    route,
    intervalMs,
    now = table.clock(),
  }: { readonly route: string; readonly intervalMs: number; readonly now?: Date },
): Promise<boolean> =>
  await update(table, route, {
    set: { lastSeenAt: str(now.toISOString()) },
    condition: 'attribute_not_exists(#lastSeenAt) OR #lastSeenAt <= :stale',
    values: { ':stale': str(new Date(now.getTime() - intervalMs).toISOString()) },
  });

/** The route's heartbeat item, strongly consistent (the sweeper decides on it). */
export const getHeartbeat = async (table: StoreTable, route: string): Promise<HeartbeatState> => {
  const { Item: item } = await table.client.send(
    new GetItemCommand({ TableName: table.tableName, Key: heartbeatKey(route), ConsistentRead: true }),
  );
  if (item === undefined) return {};
  const read = new ItemReader(item, routeStatePk(route));
  const field = (name: string) => read.optStr(name);
  return Object.fromEntries(
    Object.entries({
      lastSeenAt: field('lastSeenAt'),
      armedAt: field('armedAt'),
      silentSince: field('silentSince'),
      silentNotified: item['silentNotified']?.BOOL,
      backSince: field('backSince'),
      backSeenAt: field('backSeenAt'),
    }).filter(([, value]) => value !== undefined),
  ) as HeartbeatState;
};

/** Starts the silence clock of a route never heard from (keeps an earlier `armedAt`). */
export const armHeartbeat = async (
  table: StoreTable,
  { route, now = table.clock() }: { readonly route: string; readonly now?: Date },
): Promise<void> => {
  await update(table, route, { setIfAbsent: { armedAt: str(now.toISOString()) } });
};

/**
 * The heartbeat's changes of state, each one conditional write that exactly one of several racing
 * sweepers wins (`true`); the winner records the SMS (a notice, itself recorded once per key), then
 * marks it recorded, so a sweeper that stops in between leaves the SMS to the next sweep.
 */
export const HeartbeatTransition = {
  /** Reports the silence since `since`, unless a webhook arrived after it or a silence is already reported. */
  silent: async (
    table: StoreTable,
    { route, since, now = table.clock() }: { readonly route: string; readonly since: string; readonly now?: Date },
  ): Promise<boolean> =>
    await update(table, route, {
      set: { silentSince: str(since), silentReportedAt: str(now.toISOString()) },
      condition: 'attribute_not_exists(#silentSince) AND (attribute_not_exists(#lastSeenAt) OR #lastSeenAt <= :since)',
      values: { ':since': str(since) },
    }),
  /** The silence's SMS is recorded. */
  silentNotified: async (
    table: StoreTable,
    { route, since }: { readonly route: string; readonly since: string },
  ): Promise<boolean> =>
    await update(table, route, {
      set: { silentNotified: { BOOL: true } },
      condition: '#silentSince = :since',
      values: { ':since': str(since) },
    }),
  /** Ends the silence since `since`: a webhook arrived after it (at `seenAt`). */
  back: async (
    table: StoreTable,
    { route, since, seenAt }: { readonly route: string; readonly since: string; readonly seenAt: string },
  ): Promise<boolean> =>
    await update(table, route, {
      set: { backSince: str(since), backSeenAt: str(seenAt) },
      remove: ['silentSince', 'silentNotified', 'silentReportedAt'],
      condition: '#silentSince = :since AND #lastSeenAt > :since',
      values: { ':since': str(since) },
    }),
  /** The "back" SMS is recorded. */
  backNotified: async (
    table: StoreTable,
    { route, since }: { readonly route: string; readonly since: string },
  ): Promise<boolean> =>
    await update(table, route, {
      remove: ['backSince', 'backSeenAt'],
      condition: '#backSince = :since',
      values: { ':since': str(since) },
    }),
} as const;

/**
 * Routes' heartbeats (the dead-man's switch): this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const heartbeatOperations = (table: StoreTable) => ({
  /** The heartbeat's conditional changes of state; see {@link HeartbeatTransition}. */
  heartbeat: {
    silent: async (input: Parameters<typeof HeartbeatTransition.silent>[1]): Promise<boolean> =>
      await HeartbeatTransition.silent(table, input),
    silentNotified: async (input: Parameters<typeof HeartbeatTransition.silentNotified>[1]): Promise<boolean> =>
      await HeartbeatTransition.silentNotified(table, input),
    back: async (input: Parameters<typeof HeartbeatTransition.back>[1]): Promise<boolean> =>
      await HeartbeatTransition.back(table, input),
    backNotified: async (input: Parameters<typeof HeartbeatTransition.backNotified>[1]): Promise<boolean> =>
      await HeartbeatTransition.backNotified(table, input),
  },
  /** Records an authenticated webhook for the route's dead-man's switch, at most once per interval. See {@link touchHeartbeat}. */
  touchHeartbeat: async (input: {
    readonly route: string;
    readonly intervalMs: number;
    readonly now?: Date;
  }): Promise<boolean> => await touchHeartbeat(table, input),
  /** The route's heartbeat state. */
  getHeartbeat: async (route: string): Promise<HeartbeatState> => await getHeartbeat(table, route),
  /** Starts the silence clock of a route never heard from. */
  armHeartbeat: async (input: { readonly route: string; readonly now?: Date }): Promise<void> =>
    await armHeartbeat(table, input),
});
