import { changeCircuit, circuitView, MAX_CIRCUIT_OPEN_SECONDS, OpenedBy } from '../records/circuit';
import { parseDurationSeconds } from '../../functions/core/config/duration';
import { balanceCurrency, type RouteView } from '../../functions/core/config/view';
import { MAX_MUTE_SECONDS, ONCALL, PAGE_SIZE } from '../../functions/core/defaults';
import { IncidentState } from '../../functions/core/paging/incident';
import { MessageState, type MessageStore } from '../../functions/store';
import { maskNumbersInText } from '../../functions/core/recipients';
import { createRouter, HttpError, parseRequest, queryObject } from '../http';
import {
  dismissRecord,
  MESSAGE_STATES,
  readRecord,
  recordsPage,
  redriveRecord,
  REDRIVE_STATES,
  requeueRecords,
} from '../records';
import { attentionView } from './attention';
import { localOperator } from '../shared/operator';
import {
  CONSOLE_API,
  type AnswerOf,
  type ApiRoute,
  type Endpoint,
  type HandlerRequest,
  type Overview,
  type ServiceStatus,
} from './contract';
import { payloadChoices, previewRoute } from './preview';
import { warmPreviewWorker } from './preview-thread';
import type { ConsoleSource } from './source';
import { creditView, muteView, recordDetail, routeSummaries } from './views';
import { incidentOfRecord, incidentView, onCallView, storySmsStates } from './paging-views';

/** One request to `/console/api`: `path` is what follows that prefix, `body` the parsed JSON of a POST. */
export interface ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: unknown;
}

export interface ApiAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** Answers the console's API requests; see {@link CONSOLE_API} for the endpoints and their answers. */
export type ConsoleApi = (request: ApiRequest) => Promise<ApiAnswer>;

/** A handler for each endpoint of the route map, given its request as the schemas read it. */
type Handlers = { readonly [E in Endpoint]: (request: HandlerRequest<E>) => Promise<AnswerOf<E>> };

/**
 * The console's API over a store: Activity pages, a record's story, redrive (the same conditional
 * requeue as `sms-relay redrive`), dismiss (as `sms-relay dismiss`), routes, credit, payloads and the template preview.
 *
 * @example
 * ```ts
 * const api = createStoreApi(source);
 * await api({ method: 'GET', path: '/records', query: new URLSearchParams('state=PARKED'), body: undefined });
 * ```
 */
export function createStoreApi(source: ConsoleSource): ConsoleApi {
  const now = (): Date => (source.clock ?? (() => new Date()))();
  const knownRoute = (id: string): RouteView => {
    const route = source.loaded.routes.get(id);
    if (route === undefined) throw new HttpError(404, `no route ${id}`);
    return route;
  };
  const handlers: Handlers = {
    'GET /overview': async () => overview(source),
    'GET /service': async () => await source.withStore((store) => serviceStatus(store)),
    'POST /circuit': async ({ body }) => {
      if (body.action === 'close')
        return await source.withStore((store) => changeCircuit(store, { action: 'close' }, OpenedBy.Console, now()));
      const forSeconds = parseDurationSeconds(body.for);
      if (forSeconds === undefined || forSeconds < 1 || forSeconds > MAX_CIRCUIT_OPEN_SECONDS)
        throw new HttpError(
          400,
          `for: "${body.for}" is not a duration of up to ${MAX_CIRCUIT_OPEN_SECONDS / 3_600}h; use e.g. 30m, 2h`,
        );
      return await source.withStore((store) =>
        changeCircuit(store, { action: 'open', forSeconds }, OpenedBy.Console, now()),
      );
    },
    'GET /attention': async () =>
      await source.withStore((store) => attentionView(store, { currency: overview(source).currency, now: now() })),
    'POST /redrive': async ({ body: { from, ids, acceptDuplicates } }) =>
      await source.withStore(async (store) => {
        const outcome = await requeueRecords(store, ids, from, { acceptDuplicates });
        for (const id of outcome.requeued) source.onRequeued?.(id);
        return outcome;
      }),
    'GET /records': async ({ query }) => await source.withStore((store) => recordsPage(store, query)),
    'GET /records/:id': async ({ params: { id } }) =>
      await source.withStore(async (store) => {
        const record = await readRecord(store, id);
        if (record === undefined) throw new HttpError(404, `no record ${id}`);
        const route = source.loaded.routes.get(record.route);
        const capture =
          route?.config.capture === undefined
            ? undefined
            : await store.findCapture(record.route, record.id, record.createdAt);
        // Only a paging route's SMS belong to incidents: no store read for the others.
        const incident = route?.paging === undefined ? undefined : await incidentOfRecord(store, record);
        return {
          ...recordDetail(record, capture, route),
          incident:
            incident === undefined
              ? null
              : incidentView(incident, source.loaded, now(), await storySmsStates(store, incident)),
        };
      }),
    'POST /records/:id/redrive': async ({ params: { id }, body: { acceptDuplicates } }) =>
      await source.withStore(async (store) => {
        const answer = await redriveRecord(store, id, { acceptDuplicates });
        if (answer.requeued) source.onRequeued?.(id);
        return answer;
      }),
    'POST /records/:id/dismiss': async ({ params: { id }, body: { reason } }) =>
      await source.withStore(async (store) => await dismissRecord(store, id, { by: localOperator(), reason })),
    'GET /routes': async () => ({ routes: await source.withStore((store) => routeSummaries(source, store, now())) }),
    'GET /oncall': async () => await source.withStore((store) => onCallView(source.loaded, store, now())),
    'GET /incidents': async () =>
      await source.withStore(async (store) => ({
        incidents: await Promise.all(
          (await store.listOpenIncidents()).map(async (incident) =>
            incidentView(incident, source.loaded, now(), await storySmsStates(store, incident)),
          ),
        ),
      })),
    'POST /incidents/:id/ack': async ({ params: { id } }) =>
      await source.withStore(async (store) => {
        const outcome = await store.closeIncident(id, {
          state: IncidentState.Acknowledged,
          by: `console (${localOperator()})`,
          now: now(),
        });
        if (outcome.incident === undefined) throw new HttpError(404, `no incident ${id}`);
        return { acknowledged: outcome.closed, incident: incidentView(outcome.incident, source.loaded, now()) };
      }),
    'POST /oncall/:schedule/override': async ({ params: { schedule }, body }) => {
      if (!source.loaded.onCall.schedules.has(schedule)) throw new HttpError(404, `no schedule ${schedule}`);
      if (!source.loaded.onCall.people.has(body.person))
        throw new HttpError(400, `person: "${body.person}" is not a name of the config's people`);
      const forSeconds = parseDurationSeconds(body.for);
      if (forSeconds === undefined || forSeconds < 1 || forSeconds > ONCALL.maxOverrideSeconds)
        throw new HttpError(
          400,
          `for: "${body.for}" is not a duration of up to ${ONCALL.maxOverrideSeconds / 86_400}d; use e.g. 8h, 1d`,
        );
      return await source.withStore(async (store) => {
        await store.overrideOnCall({ schedule, person: body.person, forSeconds, reason: body.reason, now: now() });
        return await onCallView(source.loaded, store, now());
      });
    },
    'GET /credit': async ({ query: { days } }) =>
      await source.withStore((store) => creditView(source, store, days, now())),
    'GET /payloads': async ({ query: { route } }) => {
      warmPreviewWorker();
      return { payloads: await source.withStore((store) => payloadChoices(source, store, route)) };
    },
    'POST /preview': async ({ body }) => await source.withStore((store) => previewRoute(source, store, body)),
    'POST /routes/:id/mute': async ({ params: { id }, body }) => {
      const route = knownRoute(id);
      const forSeconds = parseDurationSeconds(body.for);
      if (forSeconds === undefined || forSeconds > MAX_MUTE_SECONDS) {
        throw new HttpError(
          400,
          `for: "${body.for}" is not a duration of up to ${MAX_MUTE_SECONDS / 86_400}d; use e.g. 30m, 2h, 1d`,
        );
      }
      const muted = await source.withStore((store) =>
        store.muteRoute({ route: id, forSeconds, reason: body.reason, now: now() }),
      );
      return { route: id, mute: muteView(muted, route.config.timeZone, now()) };
    },
    'POST /routes/:id/unmute': async ({ params: { id } }) => {
      knownRoute(id);
      await source.withStore((store) => store.unmuteRoute({ route: id, now: now() }));
      return { route: id, mute: null };
    },
  };
  return dispatcher(handlers);
}

/** Answers a request from the route map: the endpoint of its path and method, its request read by the endpoint's schemas. */
function dispatcher(handlers: Handlers): ConsoleApi {
  const route = createRouter(handlers, { headAsGet: true });
  return async ({ method, path, query, body }) => {
    const found = route(method, path);
    if (found === undefined) return { status: 404, body: { error: `not found: ${method} /console/api${path}` } };
    if (found.handler === undefined)
      return { status: 405, body: { error: `method ${method} not allowed on /console/api${path}` } };
    try {
      const endpoint = CONSOLE_API[found.key as Endpoint] as ApiRoute;
      const request = {
        params:
          endpoint.params === undefined ? undefined : parseRequest(endpoint.params, found.params, { status: 404 }),
        query: endpoint.query === undefined ? undefined : parseRequest(endpoint.query, queryObject(query)),
        body: endpoint.body === undefined ? undefined : parseRequest(endpoint.body, body),
      };
      return { status: 200, body: await (found.handler as (request: unknown) => Promise<unknown>)(request) };
    } catch (error) {
      if (error instanceof HttpError) return { status: error.status, body: { error: error.message } };
      throw error;
    }
  };
}

/** The SMS service's circuit, and the PENDING records waiting for it while it is open. */
async function serviceStatus(store: MessageStore): Promise<ServiceStatus> {
  const circuit = await store.getCircuit();
  if (circuit.openedAt === undefined)
    return { unreachableSince: null, waiting: 0, lastError: null, nextProbeAt: null, circuit: circuitView(circuit) };
  let waiting = 0;
  let cursor: string | undefined;
  do {
    const page = await store.listByState(MessageState.Pending, {
      limit: PAGE_SIZE.max,
      ...(cursor === undefined ? {} : { cursor }),
    });
    waiting += page.items.length;
    cursor = page.cursor;
  } while (cursor !== undefined);
  return {
    unreachableSince: circuit.openedAt,
    waiting,
    lastError: circuit.lastError ?? null,
    nextProbeAt: circuit.nextProbeAt ?? null,
    circuit: circuitView(circuit),
  };
}

function overview(source: ConsoleSource): Overview {
  return {
    source: source.description,
    environment: source.environment,
    routes: [...source.loaded.routes.values()].map((route) => ({
      id: route.id,
      source: route.pack.name,
      // Masked like everything shown; a preview that sends them back unchanged gets the route's own.
      template: maskNumbersInText(route.config.template ?? route.pack.defaultTemplate),
      when: route.config.when === undefined ? null : maskNumbersInText(route.config.when),
      recipients: route.config.recipients.map(maskNumbersInText),
    })),
    states: [...MESSAGE_STATES],
    redriveStates: [...REDRIVE_STATES],
    currency: balanceCurrency(source.loaded),
  };
}
