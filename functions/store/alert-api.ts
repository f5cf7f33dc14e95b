import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { PAGING } from '../core/defaults';
import { sha256Hex } from '../core/sources/auth';
import { type Item, ItemReader, num, str, strList } from './attributes';
import { StoreError } from './errors';
import { epochSeconds, ItemKind } from './keys';
import type { StoreTable } from './store-table';
import { TABLE } from './table';
import { writeIf } from './write';

/*
 * Opsgenie's alert API (functions/relay/opsgenie-api.ts) over the incidents: three item kinds.
 * - the alert (`ALERT#<incident id>`): what the create said that the incident does not keep (its
 *   alias, tiny id, message, description, priority, tags…), kept as long as its incident;
 * - a reference (`ALERTREF#<route>#alias|tiny#<hash>` → the incident id): how `?identifierType=alias`
 *   and `tiny` find the alert, the latest alert of an alias winning (as Opsgenie's does: an alias
 *   names the open alert, else the last one), and the route's tiny-id counter (`…#counter`);
 * - the request (`ALERTREQ#<request id>`): what `GET v2/alerts/requests/{id}` answers, kept a day.
 */

/** How long a request's status answers: Opsgenie's clients look a request up seconds after it. */
export const ALERT_REQUEST_KEPT_SECONDS = 86_400;

/** What `recordAlert` keeps of a create. */
export interface AlertInput {
  readonly route: string;
  /** The incident the create opened: the alert's `id`. */
  readonly incidentId: string;
  readonly alias: string;
  readonly message: string;
  readonly description?: string;
  readonly priority: string;
  readonly tags: readonly string[];
  readonly entity?: string;
  readonly source?: string;
  readonly now?: Date;
}

/** An alert as the store keeps it: the create's fields, its tiny id and its notes' count. */
export interface AlertEntry extends Omit<AlertInput, 'now'> {
  readonly tinyId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly notes: number;
}

/** How an alert is named in a path: `?identifierType=` (Opsgenie's default is `id`). */
export type AlertIdentifierType = 'id' | 'alias' | 'tiny';

/** The status of one API request, as `GET v2/alerts/requests/{id}` answers it. */
export interface AlertRequest {
  readonly requestId: string;
  readonly route: string;
  /** Opsgenie's action name: `Create`, `Close`, `Acknowledge`, `AddNote`, `UpdateMessage`, `UpdateDescription`. */
  readonly action: string;
  readonly success: boolean;
  /** What happened, in Opsgenie's words (`Created alert`, `Alert does not exist`…). */
  readonly status: string;
  readonly alertId?: string;
  readonly alias?: string;
  readonly processedAt: string;
}

const alertKey = (incidentId: string): Item => ({
  [TABLE.partitionKey]: str(`ALERT#${incidentId}`),
  [TABLE.sortKey]: str('ALERT'),
});
const refKey = (route: string, type: 'alias' | 'tiny' | 'counter', value = ''): Item => ({
  [TABLE.partitionKey]: str(`ALERTREF#${route}#${type}#${sha256Hex(value)}`),
  [TABLE.sortKey]: str('REF'),
});
const requestKey = (requestId: string): Item => ({
  [TABLE.partitionKey]: str(`ALERTREQ#${requestId}`),
  [TABLE.sortKey]: str('REQUEST'),
});

const kept = (now: Date): number => epochSeconds(now) + PAGING.keptSeconds;

const readAlert = (item: Item): AlertEntry => {
  const read = new ItemReader(item, 'alert');
  const description = read.optStr('description');
  const entity = read.optStr('entity');
  const source = read.optStr('source');
  return {
    route: read.str('route'),
    incidentId: read.str('incidentId'),
    alias: read.str('alias'),
    tinyId: read.str('tinyId'),
    message: read.str('message'),
    ...(description === undefined ? {} : { description }),
    priority: read.str('priority'),
    tags: read.strList('tags'),
    ...(entity === undefined ? {} : { entity }),
    ...(source === undefined ? {} : { source }),
    createdAt: read.str('createdAt'),
    updatedAt: read.str('updatedAt'),
    notes: read.optNum('notes') ?? 0,
  };
};

/** The alert of an incident, or `undefined`. */
export const getAlert = async (table: StoreTable, incidentId: string): Promise<AlertEntry | undefined> => {
  const { Item: item } = await table.client.send(
    new GetItemCommand({ TableName: table.tableName, Key: alertKey(incidentId), ConsistentRead: true }),
  );
  return item === undefined ? undefined : readAlert(item);
};

/**
 * Keeps the alert a create opened: its tiny id (the route's next number), the alert item and the
 * references by alias and tiny id. Once per incident: a second call for the same incident (two
 * deliveries of one create) returns the alert the first kept and writes nothing.
 *
 * @example
 * ```typescript
 * const alert = await store.recordAlert({ route: 'og', incidentId, alias: 'disk-db-01', message: 'Disk full', priority: 'P1', tags: [] });
 * ```
 */
export const recordAlert = async (table: StoreTable, input: AlertInput): Promise<AlertEntry> => {
  const known = await getAlert(table, input.incidentId);
  if (known !== undefined) return known;
  const now = input.now ?? table.clock();
  const counted = await writeIf(table, {
    Key: refKey(input.route, 'counter'),
    UpdateExpression: 'ADD tiny :one SET kind = :kind, #ttl = :ttl',
    ExpressionAttributeNames: { '#ttl': TABLE.timeToLive },
    ExpressionAttributeValues: { ':one': num(1), ':kind': str(ItemKind.AlertRef), ':ttl': num(kept(now)) },
    ReturnValues: 'UPDATED_NEW',
  });
  const tiny = counted.applied ? counted.item['tiny']?.N : undefined;
  if (tiny === undefined) throw new StoreError(`the tiny id counter of route ${input.route} was not updated`);
  const at = now.toISOString();
  const alert: AlertEntry = {
    route: input.route,
    incidentId: input.incidentId,
    alias: input.alias,
    tinyId: tiny,
    message: input.message,
    ...(input.description === undefined ? {} : { description: input.description }),
    priority: input.priority,
    tags: input.tags,
    ...(input.entity === undefined ? {} : { entity: input.entity }),
    ...(input.source === undefined ? {} : { source: input.source }),
    createdAt: at,
    updatedAt: at,
    notes: 0,
  };
  const written = await writeIf(table, {
    Item: {
      ...alertKey(alert.incidentId),
      kind: str(ItemKind.Alert),
      route: str(alert.route),
      incidentId: str(alert.incidentId),
      alias: str(alert.alias),
      tinyId: str(alert.tinyId),
      message: str(alert.message),
      ...(alert.description === undefined ? {} : { description: str(alert.description) }),
      priority: str(alert.priority),
      tags: strList(alert.tags),
      ...(alert.entity === undefined ? {} : { entity: str(alert.entity) }),
      ...(alert.source === undefined ? {} : { source: str(alert.source) }),
      createdAt: str(at),
      updatedAt: str(at),
      notes: num(0),
      [TABLE.timeToLive]: num(kept(now)),
    },
    ConditionExpression: 'attribute_not_exists(#pk)',
    ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
  });
  if (!written.applied) return (await getAlert(table, input.incidentId)) ?? alert;
  const reference = (type: 'alias' | 'tiny', value: string) => ({
    Item: {
      ...refKey(alert.route, type, value),
      kind: str(ItemKind.AlertRef),
      incidentId: str(alert.incidentId),
      [TABLE.timeToLive]: num(kept(now)),
    },
  });
  await Promise.all([writeIf(table, reference('alias', alert.alias)), writeIf(table, reference('tiny', alert.tinyId))]);
  return alert;
};

/**
 * The alert a path names on a route: by incident id, alias (its latest alert) or tiny id;
 * `undefined` when there is none, or it is another route's.
 */
export const findAlert = async (
  table: StoreTable,
  route: string,
  identifier: string,
  type: AlertIdentifierType,
): Promise<AlertEntry | undefined> => {
  let incidentId: string | undefined = identifier;
  if (type !== 'id') {
    const { Item: ref } = await table.client.send(
      new GetItemCommand({ TableName: table.tableName, Key: refKey(route, type, identifier), ConsistentRead: true }),
    );
    incidentId = ref?.['incidentId']?.S;
  }
  if (incidentId === undefined || incidentId === '') return undefined;
  const alert = await getAlert(table, incidentId);
  return alert?.route === route ? alert : undefined;
};

/** What `updateAlert` changes: the message or description (`PUT …/message`, `…/description`), or one more note. */
export interface AlertUpdate {
  readonly message?: string;
  readonly description?: string;
  readonly note?: boolean;
  readonly now?: Date;
}

/** Changes an alert's message or description, or counts a note; `false` when the alert is gone. */
export const updateAlert = async (table: StoreTable, incidentId: string, update: AlertUpdate): Promise<boolean> => {
  const now = update.now ?? table.clock();
  const sets = ['updatedAt = :at'];
  const values: Item = { ':at': str(now.toISOString()) };
  if (update.message !== undefined) {
    sets.push('message = :message');
    values[':message'] = str(update.message);
  }
  if (update.description !== undefined) {
    sets.push('description = :description');
    values[':description'] = str(update.description);
  }
  if (update.note === true) {
    sets.push('notes = if_not_exists(notes, :zero) + :one');
    values[':zero'] = num(0);
    values[':one'] = num(1);
  }
  const outcome = await writeIf(table, {
    Key: alertKey(incidentId),
    UpdateExpression: `SET ${sets.join(', ')}`,
    ConditionExpression: 'attribute_exists(#pk)',
    ExpressionAttributeNames: { '#pk': TABLE.partitionKey },
    ExpressionAttributeValues: values,
  });
  return outcome.applied;
};

/** Keeps a request's status for {@link ALERT_REQUEST_KEPT_SECONDS}. */
export const recordAlertRequest = async (table: StoreTable, request: AlertRequest): Promise<void> => {
  await writeIf(table, {
    Item: {
      ...requestKey(request.requestId),
      kind: str(ItemKind.AlertRequest),
      requestId: str(request.requestId),
      route: str(request.route),
      action: str(request.action),
      success: { BOOL: request.success },
      status: str(request.status),
      ...(request.alertId === undefined ? {} : { alertId: str(request.alertId) }),
      ...(request.alias === undefined ? {} : { alias: str(request.alias) }),
      processedAt: str(request.processedAt),
      [TABLE.timeToLive]: num(epochSeconds(new Date(request.processedAt)) + ALERT_REQUEST_KEPT_SECONDS),
    },
  });
};

/** A request's status, or `undefined` (unknown, expired, or made on another route). */
export const getAlertRequest = async (
  table: StoreTable,
  route: string,
  requestId: string,
): Promise<AlertRequest | undefined> => {
  const { Item: item } = await table.client.send(
    new GetItemCommand({ TableName: table.tableName, Key: requestKey(requestId), ConsistentRead: true }),
  );
  if (item === undefined) return undefined;
  const read = new ItemReader(item, 'alert request');
  if (read.str('route') !== route) return undefined;
  const alertId = read.optStr('alertId');
  const alias = read.optStr('alias');
  return {
    requestId: read.str('requestId'),
    route,
    action: read.str('action'),
    success: read.optBool('success') ?? false,
    status: read.str('status'),
    ...(alertId === undefined ? {} : { alertId }),
    ...(alias === undefined ? {} : { alias }),
    processedAt: read.str('processedAt'),
  };
};

/**
 * Opsgenie's alert API's alerts and requests: this module's operations bound to one table, its part
 * of `MessageStore` (`createStore` combines the parts).
 */
export const alertApiOperations = (table: StoreTable) => ({
  /** Keeps the alert a create opened, once per incident. See {@link recordAlert}. */
  recordAlert: async (input: AlertInput): Promise<AlertEntry> => await recordAlert(table, input),
  /** The alert a path names on a route. See {@link findAlert}. */
  findAlert: async (route: string, identifier: string, type: AlertIdentifierType): Promise<AlertEntry | undefined> =>
    await findAlert(table, route, identifier, type),
  /** Changes an alert's message or description, or counts a note. See {@link updateAlert}. */
  updateAlert: async (incidentId: string, update: AlertUpdate): Promise<boolean> =>
    await updateAlert(table, incidentId, update),
  /** Keeps a request's status. See {@link recordAlertRequest}. */
  recordAlertRequest: async (request: AlertRequest): Promise<void> => await recordAlertRequest(table, request),
  /** A request's status on a route. See {@link getAlertRequest}. */
  getAlertRequest: async (route: string, requestId: string): Promise<AlertRequest | undefined> =>
    await getAlertRequest(table, route, requestId),
});
