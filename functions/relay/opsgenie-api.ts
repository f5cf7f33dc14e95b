import { randomUUID } from 'node:crypto';
import type { CompiledRoute, LoadedConfig } from '../core/config/compile';
import { IncidentState } from '../core/paging/incident';
import { field, parseBody } from '../core/sources/body';
import { opsgenie } from '../core/sources/opsgenie';
import { authenticatingSecret, previousSecretName } from '../core/sources/rotation';
import { secretProblem } from '../core/sources/secret-check';
import { buildScope } from '../core/templates/scope';
import type { AlertEntry, AlertIdentifierType, AlertRequest, MessageStore } from '../store';
import { type HeartbeatStore, touchHeartbeat } from './heartbeat';
import type { IngestAnswer, IngestRequest } from './ingest';
import { RelayMetric, type RelayContext } from './ports';

/** What the API uses of the store: its alerts and requests, and the incidents they stand for. */
export type AlertApiStore = Pick<
  MessageStore,
  | 'recordAlert'
  | 'findAlert'
  | 'updateAlert'
  | 'recordAlertRequest'
  | 'getAlertRequest'
  | 'getIncident'
  | 'openIncidentOf'
  | 'closeIncident'
> &
  HeartbeatStore;

/** A request under a route's URL, below `/hooks/{route}/`. */
export interface ApiCall {
  readonly method: string;
  /** The path below the route's URL, without the leading slash: `v2/alerts/abc/close`. */
  readonly subPath: string;
  /** The request as ingest takes it (its body read within the cap, headers and query normalised). */
  readonly request: IngestRequest;
}

/** The API's answer: status, JSON body, and the ingest answer of a create (whose records the runtime sends). */
export interface ApiAnswer {
  readonly status: number;
  readonly body: Readonly<Record<string, unknown>>;
  readonly answer?: IngestAnswer;
}

/** Opsgenie's limits on a create's and an update's text fields (longer values are cut, as Opsgenie does). */
const LIMITS = { message: 130, alias: 512, description: 15_000, entity: 512, source: 100, tag: 50, tags: 20 } as const;

/** `?identifierType=`: Opsgenie's names, `id` when absent. */
const IDENTIFIER_TYPES: ReadonlySet<string> = new Set(['id', 'alias', 'tiny']);

/** The actions on an alert, by their path segment: Opsgenie's action name and method. */
const ACTIONS = {
  close: { method: 'POST', action: 'Close' },
  acknowledge: { method: 'POST', action: 'Acknowledge' },
  notes: { method: 'POST', action: 'AddNote' },
  message: { method: 'PUT', action: 'UpdateMessage' },
  description: { method: 'PUT', action: 'UpdateDescription' },
} as const;
type ActionName = keyof typeof ACTIONS;

/** One API request on its way: its route, id and start, for every answer. */
interface ApiFlow {
  readonly context: RelayContext<LoadedConfig, AlertApiStore>;
  readonly route: CompiledRoute;
  readonly call: ApiCall;
  readonly requestId: string;
}

/**
 * Opsgenie's alert API under an `opsgenie` route's URL (`/hooks/{route}/v2/…`), in Opsgenie's
 * shapes: the create through `ingest` (so dedupe, limits, the credit reserve and paging all apply);
 * close and acknowledge on the alert's incident, as a resolved webhook and the acknowledge link
 * close it; notes and message or description updates kept on the alert; the alert and request
 * lookups; the heartbeat ping. `undefined` for a route of another source (the edge answers 404, as
 * for any path below a route). See docs/opsgenie-api.md.
 *
 * @example
 * ```ts
 * const answer = await answerOpsgenieApi(context, { method: 'POST', subPath: 'v2/alerts', request }, ingest);
 * ```
 */
export async function answerOpsgenieApi(
  context: RelayContext<LoadedConfig, AlertApiStore>,
  call: ApiCall,
  ingest: (request: IngestRequest) => Promise<IngestAnswer>,
): Promise<ApiAnswer | undefined> {
  const route = context.config.routes.get(call.request.routeId);
  if (route?.pack !== opsgenie) return undefined;
  const flow: ApiFlow = { context, route, call, requestId: randomUUID() };
  const parts = call.subPath.replace(/\/+$/, '').split('/').map(decodeSegment);
  const method = call.method.toUpperCase();
  if (parts[0] !== 'v2') return notFound(flow, 'Could not find the requested resource');
  if (parts[1] === 'alerts' && parts.length === 2 && method === 'POST') return await create(flow, ingest);
  const refused = await authenticate(flow);
  if (refused !== undefined) return refused;
  if (parts[1] === 'heartbeats' && parts.length === 4 && parts[3] === 'ping' && (method === 'GET' || method === 'POST'))
    return await ping(flow);
  if (parts[1] !== 'alerts') return notFound(flow, 'Could not find the requested resource');
  if (parts.length === 4 && parts[2] === 'requests' && method === 'GET') return await requestStatus(flow, parts[3]!);
  if (parts.length === 3 && method === 'GET') return await getAlert(flow, parts[2]!);
  const action = parts[3] as ActionName;
  if (parts.length === 4 && Object.hasOwn(ACTIONS, action) && ACTIONS[action].method === method)
    return await act(flow, parts[2]!, action);
  return notFound(flow, 'Could not find the requested resource');
}

/** Seconds since the request arrived, as Opsgenie's `took`. */
function took({ context, call }: ApiFlow): number {
  return Math.max(0, Math.round(context.clock().getTime() - call.request.receivedAt.getTime())) / 1000;
}

function answer(flow: ApiFlow, status: number, body: Record<string, unknown>, ingested?: IngestAnswer): ApiAnswer {
  return {
    status,
    body: { ...body, took: took(flow), requestId: flow.requestId },
    ...(ingested === undefined ? {} : { answer: ingested }),
  };
}

const accepted = (flow: ApiFlow, ingested?: IngestAnswer): ApiAnswer =>
  answer(flow, 202, { result: 'Request will be processed' }, ingested);
const notFound = (flow: ApiFlow, message: string): ApiAnswer => answer(flow, 404, { message });
const invalid = (flow: ApiFlow, message: string): ApiAnswer => answer(flow, 422, { message });

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The route's GenieKey (the previous one too during a rotation); a refusal in Opsgenie's shape, or `undefined`. */
async function authenticate(flow: ApiFlow): Promise<ApiAnswer | undefined> {
  const { context, route, call } = flow;
  const secret = await context.secrets.get(route.config.secret);
  if (secret === undefined || secretProblem(route.pack, secret) !== undefined) {
    context.logger.error('route secret missing or unusable', { route: route.id, secretName: route.config.secret });
    context.metrics.add(RelayMetric.RouteMisconfigured, 1, route.id);
    return answer(flow, 500, { message: 'the relay is misconfigured for this route' });
  }
  const options = { toleranceSeconds: route.config.toleranceSeconds, route: route.config };
  const previous = await context.secrets.get(previousSecretName(route.config.secret));
  const chosen = authenticatingSecret(route.pack, call.request, options, secret, previous);
  const outcome = route.pack.authenticate(call.request, { ...options, secret: chosen.secret });
  if (outcome.ok) return undefined;
  context.logger.warn('opsgenie api request refused', { route: route.id, reason: outcome.reason });
  context.metrics.add(RelayMetric.Rejected, 1, route.id);
  return answer(flow, 401, { message: 'Could not authenticate' });
}

/** Keeps what a request did for `GET v2/alerts/requests/{id}`, and logs it. */
async function settle(
  flow: ApiFlow,
  action: string,
  outcome: { readonly success: boolean; readonly status: string; readonly alert?: AlertEntry },
): Promise<void> {
  const { context, route, requestId } = flow;
  const request: AlertRequest = {
    requestId,
    route: route.id,
    action,
    success: outcome.success,
    status: outcome.status,
    ...(outcome.alert === undefined ? {} : { alertId: outcome.alert.incidentId, alias: outcome.alert.alias }),
    processedAt: context.clock().toISOString(),
  };
  await context.store.recordAlertRequest(request);
  context.logger.info('opsgenie api request', {
    route: route.id,
    action,
    requestId,
    success: outcome.success,
    status: outcome.status,
    ...(outcome.alert === undefined ? {} : { incident: outcome.alert.incidentId }),
  });
}

/**
 * `POST v2/alerts`: the create, through ingest as any webhook of the route. Its answer becomes
 * Opsgenie's (202, or 401/422 with Opsgenie's message); the incident it opened or repeated becomes
 * the alert (`id` the incident's id).
 */
async function create(flow: ApiFlow, ingest: (request: IngestRequest) => Promise<IngestAnswer>): Promise<ApiAnswer> {
  const { context, route, call } = flow;
  const ingested = await ingest(call.request);
  if (ingested.outcome === 'refused') {
    if (ingested.status === 401) return answer(flow, 401, { message: 'Could not authenticate' }, ingested);
    if (ingested.status === 400)
      return answer(flow, 422, { message: ingested.error ?? 'Request body is not processable' }, ingested);
    return answer(flow, ingested.status, { message: ingested.error ?? 'the request was not processed' }, ingested);
  }
  const body = route.pack.parse(call.request);
  const incident = await incidentOf(flow, body);
  if (incident === undefined) {
    await settle(flow, 'Create', {
      success: false,
      status: `No alert opened: ${ingested.reason ?? ingested.outcome}`,
    });
    return accepted(flow, ingested);
  }
  const alert = await context.store.recordAlert({
    route: route.id,
    incidentId: incident,
    ...createFields(body, incident),
    now: call.request.receivedAt,
  });
  await settle(flow, 'Create', {
    success: true,
    status: ingested.outcome === 'accepted' ? 'Created alert' : 'Alert already exists: no second SMS',
    alert,
  });
  return accepted(flow, ingested);
}

/** The incident that holds the create's key (its alias, else its message), once ingest judged it. */
async function incidentOf({ context, route, call }: ApiFlow, body: unknown): Promise<string | undefined> {
  const paging = route.paging;
  if (paging === undefined) return undefined;
  const scope = buildScope({ body, headers: call.request.headers, query: call.request.query });
  const key = route.engine.render(paging.key, scope, { trackMissing: false }).text.trim();
  if (key === '') return undefined;
  return (await context.store.openIncidentOf(route.id, key))?.id;
}

const cut = (value: unknown, limit: number): string | undefined =>
  typeof value === 'string' ? value.slice(0, limit) : undefined;

/** The create's fields the alert keeps, cut to Opsgenie's limits (the pack checked their types). */
function createFields(body: unknown, incidentId: string) {
  const tags = field(body, 'tags');
  const description = cut(field(body, 'description'), LIMITS.description);
  const entity = cut(field(body, 'entity'), LIMITS.entity);
  const source = cut(field(body, 'source'), LIMITS.source);
  return {
    // Opsgenie gives an alert created without an alias its id as alias.
    alias: cut(field(body, 'alias'), LIMITS.alias) || incidentId,
    message: cut(field(body, 'message'), LIMITS.message) ?? '',
    priority: cut(field(body, 'priority'), 2) ?? 'P3',
    tags: (Array.isArray(tags) ? tags : [])
      .filter((tag): tag is string => typeof tag === 'string')
      .slice(0, LIMITS.tags)
      .map((tag) => tag.slice(0, LIMITS.tag)),
    ...(description === undefined ? {} : { description }),
    ...(entity === undefined ? {} : { entity }),
    ...(source === undefined ? {} : { source }),
  };
}

/** A value read from the request, or the answer that refuses the request. */
type Checked<T> = { readonly value: T; readonly refusal?: undefined } | { readonly refusal: ApiAnswer };

/** The alert a path names: `?identifierType=id|alias|tiny`, `id` by default; a 422 for another type. */
async function findAlert(flow: ApiFlow, identifier: string): Promise<Checked<AlertEntry | undefined>> {
  const type = flow.call.request.query['identifierType'] ?? 'id';
  if (!IDENTIFIER_TYPES.has(type)) return { refusal: invalid(flow, 'identifierType must be one of id, alias, tiny') };
  return { value: await flow.context.store.findAlert(flow.route.id, identifier, type as AlertIdentifierType) };
}

/** An action's body: none, or a JSON object (Opsgenie answers anything else 422). */
function actionBody(flow: ApiFlow): Checked<Record<string, unknown>> {
  if (flow.call.request.body.byteLength === 0) return { value: {} };
  try {
    const value = parseBody(flow.call.request);
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      return { value: value as Record<string, unknown> };
  } catch {
    // answered below, as any body that is not an object
  }
  return { refusal: invalid(flow, 'Request body is not processable') };
}

/** The text field an action requires (`note`, `message`, `description`), cut to its limit, or its 422. */
function requiredText(flow: ApiFlow, body: Record<string, unknown>, name: string, limit: number): Checked<string> {
  const value = body[name];
  if (typeof value === 'string' && value.trim() !== '') return { value: value.slice(0, limit) };
  return { refusal: invalid(flow, `${name.charAt(0).toUpperCase()}${name.slice(1)} can not be empty.`) };
}

/** The field an action requires, by its path segment (close and acknowledge require none). */
const REQUIRED: Readonly<Record<ActionName, readonly [string, number] | undefined>> = {
  close: undefined,
  acknowledge: undefined,
  notes: ['note', 25_000],
  message: ['message', LIMITS.message],
  description: ['description', LIMITS.description],
};

/**
 * `POST …/close`, `…/acknowledge`, `…/notes` and `PUT …/message`, `…/description`: answered 202 as
 * Opsgenie answers them, what happened kept on the request (an unknown alert included, as
 * Opsgenie reports it there). Close resolves the incident and acknowledge acknowledges it, as a
 * resolved webhook and the acknowledge link do: its escalation stops. No SMS.
 */
async function act(flow: ApiFlow, identifier: string, name: ActionName): Promise<ApiAnswer> {
  const { context, call } = flow;
  const body = actionBody(flow);
  if (body.refusal !== undefined) return body.refusal;
  const required = REQUIRED[name];
  const text = required === undefined ? { value: '' } : requiredText(flow, body.value, ...required);
  if (text.refusal !== undefined) return text.refusal;
  const alert = await findAlert(flow, identifier);
  if (alert.refusal !== undefined) return alert.refusal;
  const found = alert.value;
  const { action } = ACTIONS[name];
  if (found === undefined) {
    await settle(flow, action, { success: false, status: 'Alert does not exist' });
    return accepted(flow);
  }
  const now = call.request.receivedAt;
  if (name === 'close' || name === 'acknowledge') {
    const state = name === 'close' ? IncidentState.Resolved : IncidentState.Acknowledged;
    const closed = await context.store.closeIncident(found.incidentId, {
      state,
      by: `an opsgenie ${name} request`,
      now,
    });
    const done = name === 'close' ? 'Closed alert' : 'Acknowledged alert';
    const status = closed.closed ? done : `Alert is already ${closed.incident?.state.toLowerCase() ?? 'gone'}`;
    await settle(flow, action, { success: closed.closed || closed.incident?.state === state, status, alert: found });
    return accepted(flow);
  }
  const updated = await context.store.updateAlert(found.incidentId, {
    ...(name === 'message' ? { message: text.value } : {}),
    ...(name === 'description' ? { description: text.value } : {}),
    ...(name === 'notes' ? { note: true } : {}),
    now,
  });
  const done = { notes: 'Added note', message: 'Updated message', description: 'Updated description' }[name];
  await settle(flow, action, { success: updated, status: updated ? done : 'Alert does not exist', alert: found });
  return accepted(flow);
}

/** `GET v2/alerts/{identifier}`: the alert in Opsgenie's shape, its status and acknowledgement from its incident. */
async function getAlert(flow: ApiFlow, identifier: string): Promise<ApiAnswer> {
  const alert = await findAlert(flow, identifier);
  if (alert.refusal !== undefined) return alert.refusal;
  const found = alert.value;
  if (found === undefined) return notFound(flow, 'Alert does not exist');
  const incident = await flow.context.store.getIncident(found.incidentId);
  const state = incident?.state ?? IncidentState.Resolved;
  const repeated = incident?.timeline.find((entry) => entry.event === 'repeated');
  return answer(flow, 200, {
    data: {
      id: found.incidentId,
      tinyId: found.tinyId,
      alias: found.alias,
      message: found.message,
      status: state === IncidentState.Resolved ? 'closed' : 'open',
      acknowledged: state === IncidentState.Acknowledged,
      isSeen: state === IncidentState.Acknowledged,
      tags: found.tags,
      snoozed: false,
      count: 1 + (repeated?.count ?? 0),
      lastOccurredAt: repeated?.lastAt ?? found.createdAt,
      createdAt: found.createdAt,
      updatedAt: incident?.closedAt ?? found.updatedAt,
      source: found.source ?? '',
      owner: '',
      priority: found.priority,
      responders: [],
      integration: { id: flow.route.id, name: flow.route.id, type: 'API' },
      ...(found.entity === undefined ? {} : { entity: found.entity }),
      ...(found.description === undefined ? {} : { description: found.description }),
      actions: [],
      details: {},
    },
  });
}

/** `GET v2/alerts/requests/{requestId}`: what a request of this route did, while kept (a day). */
async function requestStatus(flow: ApiFlow, requestId: string): Promise<ApiAnswer> {
  const request = await flow.context.store.getAlertRequest(flow.route.id, requestId);
  if (request === undefined) return notFound(flow, 'Request does not exist');
  return answer(flow, 200, {
    data: {
      success: request.success,
      action: request.action,
      processedAt: request.processedAt,
      integrationId: flow.route.id,
      isSuccess: request.success,
      status: request.status,
      ...(request.alertId === undefined ? {} : { alertId: request.alertId }),
      ...(request.alias === undefined ? {} : { alias: request.alias }),
    },
  });
}

/**
 * `GET|POST v2/heartbeats/{name}/ping`: the route's heartbeat hears from its sender, whatever the
 * name (a route has one heartbeat); 404 on a route without `heartbeat:`, as Opsgenie answers a
 * heartbeat it does not know.
 */
async function ping(flow: ApiFlow): Promise<ApiAnswer> {
  const { context, route, call } = flow;
  if (route.config.heartbeat === undefined) return notFound(flow, 'Heartbeat does not exist');
  await touchHeartbeat(context, route, call.request.receivedAt);
  return answer(flow, 202, { result: 'PONG - Heartbeat received' });
}
