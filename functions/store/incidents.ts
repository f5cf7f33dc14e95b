import { randomBytes } from 'node:crypto';
import { BatchGetItemCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { PAGING } from '../core/defaults';
import { type Incident, IncidentState, type TimelineEntry } from '../core/paging/incident';
import { sha256Hex } from '../core/sources/auth';
import { bool, type Item, ItemReader, map, num, str, strList } from './attributes';
import { StoreError } from './errors';
import { newId } from './ids';
import { epochSeconds, ItemKind } from './keys';
import { queryAll } from './range';
import type { StoreTable } from './store-table';
import { TABLE } from './table';
import { writeAllIf, writeIf } from './write';

/*
 * Three item kinds: the incident (`INCIDENT#<id>`, kept after it closes, for its page and story),
 * the open marker (`INCIDENTS` / `OPEN#<route>#<hash of key>`: the one item two first webhooks of a
 * key race for, and the list `incidents` and the sweeper read; emptied when the incident closes),
 * and the acknowledge token (`ACK#<token>`).
 */
const OPEN_PK = 'INCIDENTS';
const openSk = (route: string, key: string): string => `OPEN#${route}#${sha256Hex(new TextEncoder().encode(key))}`;
const incidentKey = (id: string): Item => ({
  [TABLE.partitionKey]: str(`INCIDENT#${id}`),
  [TABLE.sortKey]: str('INCIDENT'),
});
const tokenKey = (token: string): Item => ({ [TABLE.partitionKey]: str(`ACK#${token}`), [TABLE.sortKey]: str('ACK') });
/** base64url of {@link PAGING.tokenBytes} random bytes. */
const TOKEN = new RegExp(`^[A-Za-z0-9_-]{${Math.ceil((PAGING.tokenBytes * 8) / 6)}}$`);

/** What `openIncident` records. */
export interface OpenIncidentInput {
  readonly route: string;
  /** The rendered incident key. */
  readonly key: string;
  /** The first SMS's text, as sent. */
  readonly text: string;
  /** Whom the first SMS went to, masked: the first line of the timeline. */
  readonly sentTo: string;
  /** The numbers the first SMS went to, kept for a renotify before any escalation step. */
  readonly recipients?: readonly string[];
  /** When the sweeper first acts (the first escalation or renotify); absent: never. */
  readonly nextDueAt?: Date;
  /** The acknowledge link's origin for every SMS of the incident (see {@link Incident.linkOrigin}). */
  readonly linkOrigin?: string;
  /** The alert is one its source calls critical (see {@link Incident.critical}). */
  readonly critical?: boolean;
  readonly now?: Date;
}

export type OpenOutcome =
  | { readonly opened: true; readonly incident: Incident }
  | { readonly opened: false; readonly incident: Incident };

/** What closing an incident says about who closed it. */
export interface CloseInput {
  readonly state: typeof IncidentState.Acknowledged | typeof IncidentState.Resolved;
  /** A masked number, `cli`, or the webhook that resolved it. */
  readonly by: string;
  readonly now?: Date;
}

export type CloseOutcome =
  | { readonly closed: true; readonly incident: Incident }
  | { readonly closed: false; readonly incident: Incident | undefined };

/** What `advanceIncident` moves an incident to, claiming one escalation or renotify. */
export interface AdvanceInput {
  /** The `actions` the caller read: the claim holds only if no one advanced it since. */
  readonly fromActions: number;
  /**
   * The `actions` it moves to: more than one further when missed steps were skipped.
   * @default fromActions + 1
   */
  readonly toActions?: number;
  readonly level: number;
  readonly nextDueAt?: Date;
  readonly entry: Omit<TimelineEntry, 'at'>;
  readonly now?: Date;
}

const entryAttr = (entry: TimelineEntry) =>
  map({
    at: str(entry.at),
    event: str(entry.event),
    detail: str(entry.detail),
    ids: entry.ids === undefined ? undefined : strList(entry.ids),
  });

const readIncident = (item: Item): Incident => {
  const read = new ItemReader(item, 'incident');
  const nextDueAt = read.optStr('nextDueAt');
  const closedAt = read.optStr('closedAt');
  const closedBy = read.optStr('closedBy');
  const recipients = item['recipients'] === undefined ? undefined : read.strList('recipients');
  const linkOrigin = read.optStr('linkOrigin');
  const critical = read.optBool('critical');
  const repeats = read.optNum('repeats');
  const lastRepeatAt = read.optStr('lastRepeatAt');
  return {
    id: read.str('id'),
    route: read.str('route'),
    key: read.str('key'),
    state: read.str('state') as IncidentState,
    openedAt: read.str('openedAt'),
    text: read.str('text'),
    ...(recipients === undefined ? {} : { recipients }),
    actions: read.num('actions'),
    level: read.num('level'),
    ...(nextDueAt === undefined ? {} : { nextDueAt }),
    ...(closedAt === undefined ? {} : { closedAt }),
    ...(closedBy === undefined ? {} : { closedBy }),
    ...(linkOrigin === undefined ? {} : { linkOrigin }),
    ...(critical === true ? { critical: true as const } : {}),
    timeline: (read.optMapList('timeline') ?? []).map((entry) => {
      const event = entry.str('event') as TimelineEntry['event'];
      const detail = entry.str('detail');
      const ids = entry.optStrList('ids');
      // The one `repeated` entry carries the count kept beside the list.
      if (event !== 'repeated' || repeats === undefined)
        return { at: entry.str('at'), event, detail, ...(ids === undefined ? {} : { ids }) };
      return {
        at: entry.str('at'),
        event,
        detail: repeats > 1 ? detail.replace(/^fired again/, `fired again ${repeats} times`) : detail,
        count: repeats,
        ...(lastRepeatAt === undefined ? {} : { lastAt: lastRepeatAt }),
      };
    }),
  };
};

const ttl = (from: Date): number => epochSeconds(from) + PAGING.keptSeconds;

/** The incident with this id, or `undefined`. */
export const getIncident = async (table: StoreTable, id: string): Promise<Incident | undefined> => {
  const { Item: item } = await table.client.send(
    new GetItemCommand({ TableName: table.tableName, Key: incidentKey(id), ConsistentRead: true }),
  );
  return item === undefined ? undefined : readIncident(item);
};

/**
 * Whether an incident still owns its key: open, or acknowledged and not yet resolved. An
 * acknowledgement stops the escalation, not the alert: its source's repeats of the still-firing
 * alert belong to it until a resolve (or the marker's retention, {@link PAGING.keptSeconds}, ends).
 */
const holdsKey = (incident: Incident): boolean =>
  incident.state === IncidentState.Open || incident.state === IncidentState.Acknowledged;

/**
 * Opens the incident of `route` and `key`, unless one holds it: the open marker is written with a
 * condition (absent, or naming an incident that resolved without removing it), in one transaction
 * with the incident, so two first webhooks of a key open one incident between them. A repeated
 * firing of an open or acknowledged incident gets `opened: false` and that incident: it neither
 * restarts nor duplicates the escalation, nor undoes the acknowledgement.
 *
 * @example
 * ```typescript
 * const { opened, incident } = await store.openIncident({ route: 'alerts', key: groupKey, text, sentTo: '2557****678', nextDueAt });
 * ```
 */
export const openIncident = async (table: StoreTable, input: OpenIncidentInput): Promise<OpenOutcome> => {
  const now = input.now ?? table.clock();
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const marker = await table.client.send(
      new GetItemCommand({
        TableName: table.tableName,
        Key: { [TABLE.partitionKey]: str(OPEN_PK), [TABLE.sortKey]: str(openSk(input.route, input.key)) },
        ConsistentRead: true,
      }),
    );
    const staleId = marker.Item?.['incidentId']?.S;
    if (staleId !== undefined) {
      const current = await getIncident(table, staleId);
      if (current !== undefined && holdsKey(current)) return { opened: false, incident: current };
    }
    const incident: Incident = {
      id: newId(now),
      route: input.route,
      key: input.key,
      state: IncidentState.Open,
      openedAt: now.toISOString(),
      text: input.text,
      ...(input.recipients === undefined || input.recipients.length === 0 ? {} : { recipients: input.recipients }),
      ...(input.linkOrigin === undefined ? {} : { linkOrigin: input.linkOrigin }),
      ...(input.critical === true ? { critical: true as const } : {}),
      actions: 0,
      level: 0,
      ...(input.nextDueAt === undefined ? {} : { nextDueAt: input.nextDueAt.toISOString() }),
      timeline: [{ at: now.toISOString(), event: 'opened', detail: `sent to ${input.sentTo}` }],
    };
    const outcome = await writeAllIf(table, [
      {
        put: {
          Item: {
            [TABLE.partitionKey]: str(OPEN_PK),
            [TABLE.sortKey]: str(openSk(input.route, input.key)),
            kind: str(ItemKind.IncidentOpen),
            incidentId: str(incident.id),
            route: str(input.route),
            [TABLE.timeToLive]: num(ttl(now)),
          },
          ConditionExpression: staleId === undefined ? 'attribute_not_exists(incidentId)' : 'incidentId = :stale',
          ExpressionAttributeValues: staleId === undefined ? undefined : { ':stale': str(staleId) },
        },
      },
      {
        put: {
          Item: incidentItem(incident, now),
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
        },
      },
    ]);
    if (outcome.applied) return { opened: true, incident };
    // Another webhook of the key opened it (or closed one) in between: read again.
  }
  throw new StoreError(`the incident of route ${input.route} kept changing while it was opened; retry`);
};

const incidentItem = (incident: Incident, now: Date): Item => ({
  ...incidentKey(incident.id),
  kind: str(ItemKind.Incident),
  id: str(incident.id),
  route: str(incident.route),
  key: str(incident.key),
  state: str(incident.state),
  openedAt: str(incident.openedAt),
  text: str(incident.text),
  ...(incident.recipients === undefined ? {} : { recipients: strList(incident.recipients) }),
  ...(incident.linkOrigin === undefined ? {} : { linkOrigin: str(incident.linkOrigin) }),
  ...(incident.critical === true ? { critical: bool(true) } : {}),
  actions: num(incident.actions),
  level: num(incident.level),
  ...(incident.nextDueAt === undefined ? {} : { nextDueAt: str(incident.nextDueAt) }),
  timeline: { L: incident.timeline.map(entryAttr) },
  tokens: { M: {} },
  [TABLE.timeToLive]: num(ttl(now)),
});

/** The incident that holds `route` and `key` (open, or acknowledged and not resolved), if any: what a resolve closes. */
export const openIncidentOf = async (table: StoreTable, route: string, key: string): Promise<Incident | undefined> => {
  const { Item: marker } = await table.client.send(
    new GetItemCommand({
      TableName: table.tableName,
      Key: { [TABLE.partitionKey]: str(OPEN_PK), [TABLE.sortKey]: str(openSk(route, key)) },
      ConsistentRead: true,
    }),
  );
  const id = marker?.['incidentId']?.S;
  if (id === undefined) return undefined;
  const incident = await getIncident(table, id);
  return incident !== undefined && holdsKey(incident) ? incident : undefined;
};

/** The open incidents, oldest first: what `sms-relay incidents` lists and the sweeper walks. */
export const listOpenIncidents = async (table: StoreTable): Promise<Incident[]> => {
  const markers = await queryAll(table, OPEN_PK, 'OPEN#', 'OPEN#\uffff');
  const ids = markers.flatMap((marker) => (marker['incidentId']?.S === undefined ? [] : [marker['incidentId'].S]));
  const incidents: Incident[] = [];
  for (let start = 0; start < ids.length; start += 100) {
    let keys = ids.slice(start, start + 100).map(incidentKey);
    while (keys.length > 0) {
      const answer = await table.client.send(
        new BatchGetItemCommand({ RequestItems: { [table.tableName]: { Keys: keys, ConsistentRead: true } } }),
      );
      incidents.push(...(answer.Responses?.[table.tableName] ?? []).map(readIncident));
      keys = answer.UnprocessedKeys?.[table.tableName]?.Keys ?? [];
    }
  }
  return incidents
    .filter((incident) => incident.state === IncidentState.Open)
    .sort((a, b) => a.openedAt.localeCompare(b.openedAt) || a.id.localeCompare(b.id));
};

/**
 * Claims the incident's next escalation or renotify: `actions` goes up by one only if it still is
 * `fromActions` and the incident is open, so of two sweepers one advances it and the other gets
 * `false`. The caller records the SMS first, under a dedupe key of the incident and the action,
 * so a crash between the two sends it at the next sweep (once: the key is the same).
 */
export const advanceIncident = async (
  table: StoreTable,
  id: string,
  { fromActions, toActions = fromActions + 1, level, nextDueAt, entry, now = table.clock() }: AdvanceInput,
): Promise<boolean> => {
  const outcome = await writeIf(table, {
    Key: incidentKey(id),
    UpdateExpression: `SET actions = :next, #level = :level, timeline = list_append(timeline, :entry) ${nextDueAt === undefined ? 'REMOVE nextDueAt' : ', nextDueAt = :due'}`,
    ConditionExpression: '#state = :open AND actions = :from',
    ExpressionAttributeNames: { '#state': 'state', '#level': 'level' },
    ExpressionAttributeValues: {
      ':next': num(toActions),
      ':from': num(fromActions),
      ':level': num(level),
      ':open': str(IncidentState.Open),
      ':entry': { L: [entryAttr({ at: now.toISOString(), ...entry })] },
      ...(nextDueAt === undefined ? {} : { ':due': str(nextDueAt.toISOString()) }),
    },
  });
  return outcome.applied;
};

/**
 * Adds a line to an incident's story, whatever its state. A `repeated` line is counted, not
 * appended: the first repeat adds it, every later one adds one to its count (`repeats`, kept beside
 * the list) and moves its `lastAt`, so an alert that fires every minute for a month leaves one
 * line. Any other line is added while the timeline has fewer than {@link PAGING.maxTimelineEntries}.
 */
export const noteIncident = async (
  table: StoreTable,
  id: string,
  entry: Omit<TimelineEntry, 'at'>,
  now: Date = table.clock(),
): Promise<void> => {
  const at = now.toISOString();
  const append = (extra: { set: string; values: Item }) =>
    writeIf(table, {
      Key: incidentKey(id),
      UpdateExpression: `SET timeline = list_append(timeline, :entry)${extra.set}`,
      ConditionExpression: `attribute_exists(#pk) AND size(timeline) < :max${entry.event === 'repeated' ? ' AND attribute_not_exists(repeats)' : ''}`,
      ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
      ExpressionAttributeValues: {
        ':entry': { L: [entryAttr({ at, event: entry.event, detail: entry.detail })] },
        ':max': num(PAGING.maxTimelineEntries),
        ...extra.values,
      },
    });
  if (entry.event !== 'repeated') {
    await append({ set: '', values: {} });
    return;
  }
  // Counted on the entry already there; else (the first repeat) the entry is added. Two first
  // repeats at once: one adds it, the other finds it on its second try.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const counted = await writeIf(table, {
      Key: incidentKey(id),
      UpdateExpression: 'ADD repeats :one SET lastRepeatAt = :at',
      ConditionExpression: 'attribute_exists(repeats)',
      ExpressionAttributeValues: { ':one': num(1), ':at': str(at) },
    });
    if (counted.applied) return;
    const added = await append({
      set: ', repeats = :one, lastRepeatAt = :at',
      values: { ':one': num(1), ':at': str(at) },
    });
    if (added.applied) return;
  }
};

/**
 * Closes an incident with a conditional update: an acknowledgement closes an open one (of
 * concurrent acknowledgements one wins, `closed: true`, and the others get `closed: false` with the
 * incident as it stands, which says who did); a resolve closes an open or acknowledged one. Only a
 * resolve empties the open marker, so the key can open a new incident: an acknowledged incident
 * keeps its key while its alert fires on.
 *
 * @example
 * ```typescript
 * const outcome = await store.closeIncident(id, { state: 'ACKNOWLEDGED', by: '2557****111' });
 * ```
 */
export const closeIncident = async (
  table: StoreTable,
  id: string,
  { state, by, now = table.clock() }: CloseInput,
): Promise<CloseOutcome> => {
  const event = state === IncidentState.Acknowledged ? 'acknowledged' : 'resolved';
  const resolving = state === IncidentState.Resolved;
  const outcome = await writeIf(
    table,
    {
      Key: incidentKey(id),
      UpdateExpression:
        'SET #state = :state, closedAt = :now, closedBy = :by, timeline = list_append(timeline, :entry), #ttl = :ttl REMOVE nextDueAt',
      ConditionExpression: resolving ? '#state IN (:open, :acknowledged)' : '#state = :open',
      ExpressionAttributeNames: { '#state': 'state', '#ttl': TABLE.timeToLive },
      ExpressionAttributeValues: {
        ':state': str(state),
        ':now': str(now.toISOString()),
        ':by': str(by),
        ':open': str(IncidentState.Open),
        ...(resolving ? { ':acknowledged': str(IncidentState.Acknowledged) } : {}),
        ':entry': { L: [entryAttr({ at: now.toISOString(), event, detail: `${event} by ${by}` })] },
        ':ttl': num(ttl(now)),
      },
      ReturnValues: 'ALL_NEW',
    },
    { current: true },
  );
  if (!outcome.applied)
    return { closed: false, incident: outcome.current === undefined ? undefined : readIncident(outcome.current) };
  const incident = readIncident(outcome.item);
  if (!resolving) return { closed: true, incident };
  // The marker is emptied, not deleted (no function may delete items): the lists skip it, the next
  // firing of the key fills it. Left naming the closed incident (a crash here), it is replaced the same way.
  await writeIf(table, {
    Key: { [TABLE.partitionKey]: str(OPEN_PK), [TABLE.sortKey]: str(openSk(incident.route, incident.key)) },
    UpdateExpression: 'REMOVE incidentId',
    ConditionExpression: 'incidentId = :id',
    ExpressionAttributeValues: { ':id': str(id) },
  });
  return { closed: true, incident };
};

/**
 * The acknowledge token of `number` for an incident: the one it has (an incident gives each
 * recipient one token), else a new one of {@link PAGING.tokenBytes} random bytes, base64url. The
 * token's item is written before the incident names it, so a token the incident names always
 * answers; a token that lost the race to name it is never sent.
 */
export const ackToken = async (
  table: StoreTable,
  incidentId: string,
  number: string,
  now: Date = table.clock(),
): Promise<string> => {
  const fresh = randomBytes(PAGING.tokenBytes).toString('base64url');
  const written = await writeIf(table, {
    Item: {
      ...tokenKey(fresh),
      kind: str(ItemKind.AckToken),
      incidentId: str(incidentId),
      number: str(number),
      createdAt: str(now.toISOString()),
      [TABLE.timeToLive]: num(ttl(now)),
    },
    ConditionExpression: 'attribute_not_exists(#pk)',
    ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
  });
  if (!written.applied) throw new StoreError('an acknowledge token clashed with another; try again');
  const named = await writeIf(table, {
    Key: incidentKey(incidentId),
    UpdateExpression: 'SET tokens.#number = if_not_exists(tokens.#number, :token)',
    ConditionExpression: 'attribute_exists(#pk)',
    ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#number': number },
    ExpressionAttributeValues: { ':token': str(fresh) },
    ReturnValues: 'ALL_NEW',
  });
  if (!named.applied) throw new StoreError(`incident ${incidentId} does not exist`);
  const token = named.item['tokens']?.M?.[number]?.S;
  if (token === undefined) throw new StoreError(`incident ${incidentId} kept no token for its recipient`);
  return token;
};

/** What a valid acknowledge token opens: its incident and the number it was sent to. */
export interface AckTarget {
  readonly incident: Incident;
  readonly number: string;
}

/**
 * The incident an acknowledge token opens, while the incident is open and for
 * {@link PAGING.linkAfterCloseSeconds} after it closed; `undefined` for anything else (a malformed,
 * unknown or expired token): the caller answers 404 without saying which.
 */
export const findAckToken = async (
  table: StoreTable,
  token: string,
  now: Date = table.clock(),
): Promise<AckTarget | undefined> => {
  if (!TOKEN.test(token)) return undefined;
  const { Item: item } = await table.client.send(
    new GetItemCommand({ TableName: table.tableName, Key: tokenKey(token), ConsistentRead: true }),
  );
  const incidentId = item?.['incidentId']?.S;
  const number = item?.['number']?.S;
  if (incidentId === undefined || number === undefined) return undefined;
  const { Item: incidentItem } = await table.client.send(
    new GetItemCommand({ TableName: table.tableName, Key: incidentKey(incidentId), ConsistentRead: true }),
  );
  // Only the token the incident names: one that lost the race to be named was never sent.
  if (incidentItem === undefined || incidentItem['tokens']?.M?.[number]?.S !== token) return undefined;
  const incident = readIncident(incidentItem);
  if (
    incident.closedAt !== undefined &&
    now.getTime() - Date.parse(incident.closedAt) > PAGING.linkAfterCloseSeconds * 1000
  )
    return undefined;
  return { incident, number };
};

/**
 * Incidents and acknowledge tokens: this module's operations bound to one table, its part of `MessageStore`
 * (`createStore` combines the parts). An operation added here is on the store.
 */
export const incidentOperations = (table: StoreTable) => ({
  /** Opens the incident of a route and key unless one is open. See {@link openIncident}. */
  openIncident: async (input: OpenIncidentInput): Promise<OpenOutcome> => await openIncident(table, input),
  /** The open incident of a route and key. See {@link openIncidentOf}. */
  openIncidentOf: async (route: string, key: string): Promise<Incident | undefined> =>
    await openIncidentOf(table, route, key),
  getIncident: async (id: string): Promise<Incident | undefined> => await getIncident(table, id),
  /** The open incidents, oldest first. See {@link listOpenIncidents}. */
  listOpenIncidents: async (): Promise<Incident[]> => await listOpenIncidents(table),
  /** Claims an incident's next escalation or renotify. See {@link advanceIncident}. */
  advanceIncident: async (id: string, input: AdvanceInput): Promise<boolean> => await advanceIncident(table, id, input),
  /** Adds a line to an incident's story. See {@link noteIncident}. */
  noteIncident: async (id: string, entry: Omit<TimelineEntry, 'at'>, now?: Date): Promise<void> =>
    await noteIncident(table, id, entry, now),
  /** Acknowledges or resolves an open incident; one of concurrent closes wins. See {@link closeIncident}. */
  closeIncident: async (id: string, input: CloseInput): Promise<CloseOutcome> => await closeIncident(table, id, input),
  /** A recipient's acknowledge token for an incident. See {@link ackToken}. */
  ackToken: async (incidentId: string, number: string, now?: Date): Promise<string> =>
    await ackToken(table, incidentId, number, now),
  /** The incident a token opens while valid. See {@link findAckToken}. */
  findAckToken: async (token: string, now?: Date): Promise<AckTarget | undefined> =>
    await findAckToken(table, token, now),
});
