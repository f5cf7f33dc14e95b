import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { withDelivery } from '../../functions/relay/incident-story';
import { answerAckLink, answerWebhook, type EdgeOptions, isAckPath, isHookPath } from '../../functions/relay/edge';
import type { AckPageConfig } from '../../functions/relay/ack-page';
import type { IngestAnswer, IngestRequest } from '../../functions/relay/ingest';
import type { Lane } from '../../functions/core/lanes';
import { type MessageRecord, type MessageStore, StoreError } from '../../functions/store';
import { isConsolePath } from '../console/http';
import {
  consoleRefusal,
  createGuardedServer,
  createRouter,
  routeTable,
  HTTP_LIMITS,
  HttpError,
  isLocalRequest,
  isUnder,
  parseJson,
  parseRequest,
  queryObject,
  readBody,
  readLimited,
  requestPath,
  requestQuery,
  sendError,
  sendJson,
  sendText,
  type HttpLimits,
} from '../http';
import { listen } from '../shared/listen';
import { RUNTIME_FILE } from '../shared/discovery';
import { ACKNOWLEDGED_BY_CLI } from '../shared/record-access';
import { RELAY_PREFIX } from '../shared/relay-client';
import { RELAY_API, type RelayAnswer, type RelayEndpoint } from '../records/relay-api';
import { changeCircuit, circuitView, OpenedBy } from '../records/circuit';
import { IncidentState } from '../../functions/core/paging/incident';
import type { Turns } from './turns';
import { localOperator } from '../shared/operator';
import { dismissRecords, dismissSelected, queryRecords, requeueRecords, toRecordView } from '../records';
import type { OnCallDirectory } from '../../functions/core/oncall/schedule';
import { onCallAt } from '../../functions/core/oncall/resolve';

const MAX_CONTROL_BODY_BYTES = 64 * 1024;

/** What the runtime prints for each webhook. */
export interface WebhookReport {
  readonly route: string;
  readonly status: number;
  /** The ingest answer's `status` (`accepted`, `duplicate`, …), `api <method> <path>` (a route's API answered, no SMS; see `apiRequestShape`) or `error`. */
  readonly outcome: string | undefined;
  readonly reason: string | undefined;
  readonly ids: readonly string[];
}

export interface HealthReport {
  readonly ok: boolean;
  readonly [key: string]: unknown;
}

export interface RelayServerDependencies {
  readonly maxBodyBytes: number;
  /** The relay's `ingestWebhook`: answers only once the webhook is recorded. */
  readonly ingest: (request: IngestRequest) => Promise<IngestAnswer>;
  /** A route's API below its URL (`answerOpsgenieApi`), as `EdgeOptions.api`; without it those paths are 404. */
  readonly api?: EdgeOptions['api'];
  /**
   * Called with ids to send now, after the answer was sent: a 202's, a duplicate's (still PENDING
   * after a crash), a redrive's; with each id's lane when ingest knows them (not for a redrive,
   * whose records carry theirs).
   */
  readonly onAccepted: (ids: readonly string[], lanes?: readonly Lane[]) => void;
  readonly onWebhook: (report: WebhookReport) => void;
  readonly onError: (message: string, error: unknown) => void;
  readonly health: () => Promise<HealthReport>;
  readonly store: MessageStore;
  /** Where `/_relay/records` listings wait their turn (see `takeTurns`); without it they run at once. */
  readonly listings?: Turns;
  /** The config's route ids and each one's time zone: a mute of another route is refused. Without it any id is taken. */
  readonly routes?: ReadonlyMap<string, string>;
  /**
   * Whether a request's `Authorization` header is `Bearer <secret>`, the secret of
   * `RELAY_DATA_DIR/runtime.json` (mode 0600) that `logs`, `redrive`, `mute` and `sms-relay console`
   * present: every `/_relay` request needs it, else 401. Reaching loopback proves nothing: any
   * local process (another user's too) can.
   */
  readonly isOperator: (authorization: string | undefined) => boolean;
  /** The config's people and schedules: an override of another schedule or person is refused. Without it any name is taken. */
  readonly onCall?: OnCallDirectory;
  /** The compiled config, for the acknowledge page's names, clock and next step. Without it the page shows masked numbers in UTC. */
  readonly paging?: AckPageConfig;
  /** Serves `/console` (see `createConsoleHandler`); without it those paths are 404. */
  readonly console?: (request: IncomingMessage, response: ServerResponse, path: string) => Promise<void>;
  /**
   * A webhook's time of arrival.
   * @default the system clock
   */
  readonly clock?: () => Date;
}

export interface RelayServer {
  readonly server: Server;
  /** Listens on `host:port` (0: a free port) and returns the port. */
  listen(port: number, host: string): Promise<number>;
  /** Starts serving; until then every request gets 503. */
  attach(dependencies: RelayServerDependencies): void;
  /** Stops accepting connections; requests in progress finish. */
  close(): Promise<void>;
}

/**
 * The runtime's HTTP server, standing in for API Gateway: `POST /hooks/{route}` to the relay's
 * ingest operation (the exact body bytes, headers as API Gateway passes them on), `GET /health`, the local-only `/_relay` endpoints, JSON 404s
 * and 405s. The body limit is enforced here too, while reading, so an oversized body is never
 * buffered whole. Slow or idle clients and connection floods are cut off by `HTTP_LIMITS`;
 * `/health` and `/_relay` answer only requests whose Host is this loopback address and port, and
 * `/_relay` none whose `Origin` or `Sec-Fetch-Site` names another site, nor any without the
 * runtime's secret (`isOperator`).
 * `limits` is for tests that need shorter time-outs or a lower cap.
 *
 * @example
 * ```ts
 * const relay = createRelayServer();
 * const port = await relay.listen(0, '127.0.0.1');
 * relay.attach({ maxBodyBytes, ingest, onAccepted, onWebhook, onError, health, store, isOperator: access.isForwarder });
 * ```
 */
export function createRelayServer(limits: HttpLimits = HTTP_LIMITS): RelayServer {
  let dependencies: RelayServerDependencies | undefined;
  let closing = false;
  const server = createGuardedServer((request, response) => {
    if (closing) {
      // Stopping: a request on a kept-alive connection is refused (nothing recorded), so the
      // sender retries against the next runtime; the connection is closed after this answer.
      response.setHeader('connection', 'close');
      sendJson(response, 503, { error: 'the relay is stopping; retry later' });
      return;
    }
    if (dependencies === undefined) {
      sendJson(response, 503, { error: 'the relay is starting' });
      return;
    }
    handle(request, response, dependencies).catch((error: unknown) => {
      // A refused request (a bad query or body): its answer, even when its body was read to the end.
      if (error instanceof HttpError && !response.headersSent) return sendError(response, error);
      // A sender that hung up mid-body is gone: nothing was recorded and there is no one to answer.
      if (request.aborted || request.destroyed || (error as NodeJS.ErrnoException).code === 'ECONNRESET') {
        response.destroy();
        return;
      }
      dependencies?.onError(`internal error on ${request.method ?? 'GET'} ${requestPath(request.url)}`, error);
      if (!response.headersSent) sendJson(response, 500, { error: 'internal error' });
      else response.destroy();
    });
  }, limits);
  return {
    server,
    listen: async (wanted, host) => await listen(server, wanted, host),
    attach: (attached) => {
      dependencies = attached;
    },
    close: async () => {
      closing = true;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
  };
}

/** What each route of the runtime's table gets. */
interface RelayCall {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly dependencies: RelayServerDependencies;
}

/** The runtime's own endpoints (`sms-relay logs`, `redrive`, `dismiss`, `mute`, `oncall`, `incidents`, `ack` call `/_relay`); webhooks, acknowledge links and the console are routed before. */
const RELAY_ROUTES = routeTable<RelayCall>()({
  'GET /health': health,
  'HEAD /health': health,
  'GET /_relay/records': handleRecords,
  'POST /_relay/redrive': handleRedrive,
  'POST /_relay/dismiss': handleDismiss,
  'GET /_relay/mutes': listMutes,
  'GET /_relay/routes': listRoutes,
  'POST /_relay/mutes': muteRoute,
  'POST /_relay/unmute': unmuteRoute,
  'GET /_relay/overrides': listOverrides,
  'GET /_relay/oncall': listOnCall,
  'POST /_relay/overrides': overrideOnCall,
  'GET /_relay/incidents': listIncidents,
  'POST /_relay/ack': acknowledge,
  'GET /_relay/circuit': showCircuit,
  'POST /_relay/circuit': actOnCircuit,
});
const relayRoute = createRouter(RELAY_ROUTES);

/** `'GET /records'` of {@link RELAY_API} as the table names it: `'GET /_relay/records'`. */
type ServedKey<E extends RelayEndpoint> = E extends `${infer Method} ${infer Path}`
  ? `${Method} ${typeof RELAY_PREFIX}${Path}`
  : never;
// The table serves every endpoint of the map and no other under the prefix: the compiler checks both ways.
// biome-ignore lint/correctness/noUnusedVariables: a type check, never read
const SERVES_EVERY_ENDPOINT: Record<ServedKey<RelayEndpoint>, unknown> = RELAY_ROUTES;
// biome-ignore lint/correctness/noUnusedVariables: a type check, never read
const SERVES_NO_OTHER: readonly ServedKey<RelayEndpoint>[] = Object.keys(RELAY_ROUTES).filter(
  (key): key is Exclude<keyof typeof RELAY_ROUTES, 'GET /health' | 'HEAD /health'> => !key.endsWith(' /health'),
);

/** A 200 with the answer of `endpoint`, typed by the route map. */
function answer<E extends RelayEndpoint>(response: ServerResponse, _endpoint: E, body: RelayAnswer<E>): void {
  sendJson(response, 200, body);
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  dependencies: RelayServerDependencies,
): Promise<void> {
  const path = requestPath(request.url);
  const method = request.method ?? 'GET';
  // Routed by the edge, as on Lambda.
  if (isHookPath(path)) return await handleWebhook(request, response, dependencies, path);
  // The acknowledge link is public like the webhooks (a phone opens it through the tunnel's Host).
  if (isAckPath(path)) return await handleAck(request, response, dependencies, path);
  // Only webhooks are for the world (a tunnel reaches them with its own Host); the rest is for this machine.
  if (path === '/health' && !isLocalRequest(request)) return sendJson(response, 403, { error: 'local requests only' });
  // A page of any site can make a browser call 127.0.0.1: /_relay answers only this machine's programs.
  const relay = isUnder(path, RELAY_PREFIX);
  const refusal = relay ? consoleRefusal(request) : undefined;
  if (refusal !== undefined) return sendJson(response, 403, { error: refusal });
  if (relay && !dependencies.isOperator(request.headers.authorization)) {
    request.resume();
    return sendJson(
      response,
      401,
      {
        error: `unauthorized: send Authorization: Bearer <consoleSecret of ${RUNTIME_FILE}> (sms-relay logs, redrive and mute do)`,
      },
      { headers: { 'www-authenticate': 'Bearer' } },
    );
  }
  // The console routes its own paths (`createConsoleHandler`).
  if (dependencies.console !== undefined && isConsolePath(path))
    return await dependencies.console(request, response, path);
  const found = relayRoute(method, path);
  if (found === undefined) return sendJson(response, 404, { error: `not found: ${method} ${path}` });
  // `/health`'s HEAD line is GET's twin, so Allow names only GET (what clients were always told).
  if (found.handler === undefined)
    return methodNotAllowed(response, found.allowed.filter((allowed) => allowed !== 'HEAD').join(', '));
  await found.handler({ request, response, dependencies }, found.params);
}

async function health({ response, dependencies }: RelayCall): Promise<void> {
  const report = await dependencies.health();
  sendJson(response, report.ok ? 200 : 503, report);
}

/**
 * What an API request below a route asked, for its terminal line: the path below the route with the
 * alert, request or heartbeat it names written `{id}` (`v2/alerts/{id}/close`), since the caller
 * chose that text.
 */
export function apiRequestShape(path: string): string {
  const segments = path.split('/').slice(3);
  const named = segments[2] === 'requests' ? 3 : 2;
  return segments.map((segment, index) => (index === named ? '{id}' : segment)).join('/');
}

/** A translation to and from `answerWebhook` (functions/relay/edge.ts), as the Lambda handler is. */
async function handleWebhook(
  request: IncomingMessage,
  response: ServerResponse,
  dependencies: RelayServerDependencies,
  path: string,
): Promise<void> {
  const { maxBodyBytes, ingest, api, onError, onWebhook, onAccepted, clock = () => new Date() } = dependencies;
  const receivedAt = clock();
  const method = request.method ?? 'GET';
  // Read only once the edge accepts the path and method, and never beyond the cap.
  const body = async (): Promise<Uint8Array | undefined> => {
    const bytes = await readLimited(request, maxBodyBytes);
    return bytes === undefined ? undefined : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
  const headers = headerPairs(request);
  const edge = await answerWebhook(
    { method, path, headers, query: requestQuery(request.url), body, receivedAt },
    ingest,
    {
      maxBodyBytes,
      onError: (route, error) => onError(`webhook on route ${route} not recorded`, error),
      ...(api === undefined ? {} : { api }),
    },
  );
  sendJson(response, edge.status, edge.body, { headers: edge.headers });
  if (edge.route === undefined || edge.status === 405) return;
  const { answer } = edge;
  if (answer === undefined) {
    // A route's API answers in its own shape (Opsgenie's `message`, `result`); below 400 it sent no SMS.
    const { error, message, result } = edge.body as { error?: string; message?: string; result?: string };
    const reason = edge.status === 503 ? 'not recorded; the sender will retry' : (error ?? message ?? result);
    const outcome = edge.status < 400 ? `api ${method} ${apiRequestShape(path)}` : 'error';
    return onWebhook({ route: edge.route, status: edge.status, outcome, reason, ids: [] });
  }
  const refusal = answer.outcome === 'refused';
  // A refusal with a reason prints its error as the outcome (`401 unauthorized: …`); one without, the error as the reason.
  onWebhook({
    route: edge.route,
    status: answer.status,
    outcome: refusal ? (answer.reason === undefined ? undefined : answer.error) : answer.outcome,
    reason: answer.reason ?? (refusal ? answer.error : undefined),
    ids: answer.ids,
  });
  // A duplicate's record may still be PENDING (the runtime that first took it was killed before
  // sending): offered to the sender again, whose conditional claim skips it unless it is due.
  if ((answer.outcome === 'accepted' || answer.outcome === 'duplicate') && answer.ids.length > 0)
    onAccepted(answer.ids, answer.lanes);
}

/** A request's headers in arrival order, as the edge takes them. */
function headerPairs(request: IncomingMessage): (readonly [string, string])[] {
  return Array.from(
    { length: request.rawHeaders.length >> 1 },
    (_, index) => [request.rawHeaders[2 * index]!, request.rawHeaders[2 * index + 1]!] as const,
  );
}

/** The acknowledge link, as the Lambda handler answers it (functions/relay/edge.ts). */
async function handleAck(
  request: IncomingMessage,
  response: ServerResponse,
  { store, paging, clock = () => new Date() }: RelayServerDependencies,
  path: string,
): Promise<void> {
  request.resume();
  const { status, headers, html } = await answerAckLink(
    { method: request.method ?? 'GET', path, receivedAt: clock(), headers: headerPairs(request) },
    store,
    paging,
  );
  const { 'content-type': type, ...rest } = headers;
  sendText(response, status, request.method === 'HEAD' ? '' : html, {
    ...(type === undefined ? {} : { type }),
    headers: rest,
  });
}

async function handleRecords({ request, response, dependencies: { store, listings } }: RelayCall): Promise<void> {
  const query = parseRequest(
    RELAY_API['GET /records'].query,
    queryObject(new URLSearchParams(requestQuery(request.url))),
  );
  const list = async (): Promise<MessageRecord[]> => await queryRecords(store, query);
  const records = await (listings === undefined ? list() : listings.run(list));
  answer(response, 'GET /records', { records: records.map(toRecordView) });
}

async function handleRedrive({ request, response, dependencies }: RelayCall): Promise<void> {
  const { from, ids, acceptDuplicates } = parseRequest(RELAY_API['POST /redrive'].body, await controlBody(request));
  const outcome = await requeueRecords(dependencies.store, ids, from, { acceptDuplicates });
  answer(response, 'POST /redrive', outcome);
  // Sent now rather than at the sweeper's next pass.
  if (outcome.requeued.length > 0) dependencies.onAccepted(outcome.requeued);
}

/**
 * `POST /_relay/dismiss` (`sms-relay dismiss`): ends records unsent, `{ids}` (with `state`: each
 * only while still in it) or `{state, route, since}`, with a `reason`; `by` defaults to the OS user
 * running the relay.
 */
async function handleDismiss({ request, response, dependencies: { store, listings } }: RelayCall): Promise<void> {
  const {
    ids,
    state,
    route,
    since,
    reason,
    by = localOperator(),
  } = parseRequest(RELAY_API['POST /dismiss'].body, await controlBody(request));
  if (ids !== undefined) {
    answer(
      response,
      'POST /dismiss',
      await dismissRecords(store, ids, { by, reason, ...(state === undefined ? {} : { from: state }) }),
    );
    return;
  }
  // The schema lets no request through with neither ids nor a state.
  const selection = {
    state: state!,
    ...(route === undefined ? {} : { route }),
    ...(since === undefined ? {} : { since }),
  };
  const dismiss = async () => await dismissSelected(store, selection, { by, reason });
  answer(response, 'POST /dismiss', await (listings === undefined ? dismiss() : listings.run(dismiss)));
}

/** The JSON body of a `/_relay` POST, read within its cap. */
async function controlBody(request: IncomingMessage): Promise<unknown> {
  // A browser cannot send this content type cross-origin without a preflight this server never approves.
  if (!(request.headers['content-type'] ?? '').toLowerCase().startsWith('application/json'))
    throw new HttpError(415, 'send application/json');
  const body = await readBody(request, {
    limitBytes: MAX_CONTROL_BODY_BYTES,
    tooLarge: `body over ${MAX_CONTROL_BODY_BYTES} bytes`,
  });
  return parseJson(body, { invalid: 'the body is not valid JSON' });
}

/** `GET /_relay/mutes`: the mutes in force (`sms-relay mute --list` while the runtime holds the store). */
async function listMutes({ response, dependencies: { store } }: RelayCall): Promise<void> {
  answer(response, 'GET /mutes', { mutes: await store.listMutes() });
}

/** `GET /_relay/routes`: the config's routes and their time zones (`sms-relay mutes` tells the time in them). */
async function listRoutes({ response, dependencies: { routes } }: RelayCall): Promise<void> {
  answer(response, 'GET /routes', {
    routes: [...(routes ?? new Map<string, string>())].map(([id, timeZone]) => ({ id, timeZone })),
  });
}

/** `POST /_relay/mutes` `{route, forSeconds, reason}`: `sms-relay mute` while the runtime holds the store. */
async function muteRoute({ request, response, dependencies: { store, routes } }: RelayCall): Promise<void> {
  const { route, forSeconds, reason } = parseRequest(RELAY_API['POST /mutes'].body, await controlBody(request));
  knownRoute(routes, route);
  answer(response, 'POST /mutes', { mute: await refusedByStore(store.muteRoute({ route, forSeconds, reason })) });
}

/** `POST /_relay/unmute` `{route}`: ends its mute. */
async function unmuteRoute({ request, response, dependencies: { store, routes } }: RelayCall): Promise<void> {
  const { route } = parseRequest(RELAY_API['POST /unmute'].body, await controlBody(request));
  knownRoute(routes, route);
  answer(response, 'POST /unmute', { unmuted: await store.unmuteRoute({ route }) });
}

/** `GET /_relay/circuit`: the SMS service's circuit (`sms-relay circuit` while the runtime holds the store). */
async function showCircuit({ request, response, dependencies: { store } }: RelayCall): Promise<void> {
  const { provider } = parseRequest(
    RELAY_API['GET /circuit'].query,
    queryObject(new URLSearchParams(requestQuery(request.url))),
  );
  answer(response, 'GET /circuit', { circuit: circuitView(await store.getCircuit(provider)) });
}

/** `POST /_relay/circuit` `{action: 'open', forSeconds}` or `{action: 'close'}`: `sms-relay circuit open|close`. */
async function actOnCircuit({ request, response, dependencies: { store } }: RelayCall): Promise<void> {
  const change = parseRequest(RELAY_API['POST /circuit'].body, await controlBody(request));
  answer(response, 'POST /circuit', await changeCircuit(store, change, OpenedBy.Cli));
}

function knownRoute(routes: ReadonlyMap<string, string> | undefined, route: string): void {
  if (routes !== undefined && !routes.has(route)) throw new HttpError(400, `unknown route "${route}"`);
}

/** A store refusal of a request's values (a mute too long, an override of the past) as a 400. */
async function refusedByStore<Value>(pending: Promise<Value>): Promise<Value> {
  try {
    return await pending;
  } catch (error) {
    if (error instanceof StoreError) throw new HttpError(400, error.message, { cause: error });
    throw error;
  }
}

/** `GET /_relay/incidents` (`sms-relay incidents`). */
async function listIncidents({ response, dependencies: { store } }: RelayCall): Promise<void> {
  const open = await store.listOpenIncidents();
  answer(response, 'GET /incidents', {
    incidents: await Promise.all(open.map(async (incident) => await withDelivery(store, incident))),
  });
}

/** `POST /_relay/ack` (`sms-relay ack`). */
async function acknowledge({ request, response, dependencies: { store } }: RelayCall): Promise<void> {
  const { incident } = parseRequest(RELAY_API['POST /ack'].body, await controlBody(request));
  answer(
    response,
    'POST /ack',
    await store.closeIncident(incident, { state: IncidentState.Acknowledged, by: ACKNOWLEDGED_BY_CLI }),
  );
}

/** `GET /_relay/overrides?schedules=ops,db`: the on-call overrides in force (`sms-relay oncall` while the runtime holds the store). */
async function listOverrides({ request, response, dependencies: { store } }: RelayCall): Promise<void> {
  const { schedules } = parseRequest(
    RELAY_API['GET /overrides'].query,
    queryObject(new URLSearchParams(requestQuery(request.url))),
  );
  answer(response, 'GET /overrides', { overrides: await store.activeOverrides({ schedules }) });
}

/** `GET /_relay/oncall`: who each schedule puts on call now (`sms-relay oncall` while the runtime holds the store). */
async function listOnCall({
  response,
  dependencies: { store, onCall, clock = () => new Date() },
}: RelayCall): Promise<void> {
  const schedules = [...(onCall?.schedules.values() ?? [])];
  const overrides =
    schedules.length === 0 ? [] : await store.activeOverrides({ schedules: schedules.map(({ name }) => name) });
  const now = clock();
  answer(response, 'GET /oncall', {
    oncall: schedules.map((schedule) => {
      const found = onCallAt(schedule, overrides, onCall!.people, now);
      return {
        schedule: found.schedule,
        person: found.person.name,
        until: found.until?.toISOString() ?? null,
        timeZone: schedule.timeZone,
        overrideReason: found.override?.reason ?? null,
      };
    }),
  });
}

/** `POST /_relay/overrides` `{schedule, person, forSeconds, reason}`: sets one. */
async function overrideOnCall({ request, response, dependencies: { store, onCall } }: RelayCall): Promise<void> {
  const { schedule, person, forSeconds, reason } = parseRequest(
    RELAY_API['POST /overrides'].body,
    await controlBody(request),
  );
  if (onCall !== undefined && !onCall.schedules.has(schedule))
    throw new HttpError(400, `unknown schedule "${schedule}"`);
  if (onCall !== undefined && !onCall.people.has(person)) throw new HttpError(400, `unknown person "${person}"`);
  answer(response, 'POST /overrides', {
    override: await refusedByStore(store.overrideOnCall({ schedule, person, forSeconds, reason })),
  });
}

function methodNotAllowed(response: ServerResponse, allow: string): void {
  sendJson(response, 405, { error: `method not allowed; use ${allow}` }, { headers: { allow } });
}
