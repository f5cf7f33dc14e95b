import { z } from 'zod';
import { PAGE_SIZE } from '../../functions/core/defaults';
import { describeIssues } from '../../functions/core/config/parse';
import { maskNumbersInText } from '../../functions/core/recipients';
import { HttpError } from '../http-error';
import { MESSAGE_STATES, parseSince, parseState, REDRIVE_STATES, toRecordView } from '../runtime/records';
import { parseDurationSeconds } from '../../functions/core/config/duration';
import { MAX_MUTE_REASON_CHARS, MAX_MUTE_SECONDS, MessageState } from '../../functions/store';
import type { MuteAnswer, Overview, PreviewRequest, RedriveAnswer } from './contract';
import { payloadChoices, previewRoute } from './preview';
import { warmPreviewWorker } from './preview-thread';
import type { ConsoleSource } from './source';
import { creditView, MAX_CREDIT_DAYS, muteView, recordDetail, recordsPage, routeSummaries } from './views';

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

/** Answers the console's API requests; see `contract.ts` for the paths and their answers. */
export type ConsoleApi = (request: ApiRequest) => Promise<ApiAnswer>;

const MAX_PAGE = 500;
const DEFAULT_CREDIT_DAYS = 14;
const RECORD_PATH = /^\/records\/([0-9A-Z]{1,40})$/;
const REDRIVE_PATH = /^\/records\/([0-9A-Z]{1,40})\/redrive$/;
const MUTE_PATH = /^\/routes\/([a-z0-9][a-z0-9_-]{0,63})\/(mute|unmute)$/;

const MuteRequestSchema = z.strictObject({
  for: z.union([z.string().max(20), z.number()]),
  reason: z.string().max(MAX_MUTE_REASON_CHARS).default(''),
});

const PreviewRequestSchema = z.strictObject({
  route: z.string().min(1).max(200),
  template: z.string().max(10_000).optional(),
  when: z.string().max(2_000).optional(),
  recipients: z.array(z.string().max(200)).max(100).optional(),
  capture: z.string().max(40).optional(),
  fixture: z.string().max(200).optional(),
  payload: z.string().max(256 * 1024).optional(),
  headers: z.record(z.string().max(200), z.string().max(4_000)).optional(),
});

/**
 * The console's API over a store: Activity pages, a record's story, redrive (the same conditional
 * requeue as `sms-relay redrive`), routes, credit, payloads and the template preview.
 *
 * @example
 * ```ts
 * const api = createStoreApi(source);
 * await api({ method: 'GET', path: '/records', query: new URLSearchParams('state=PARKED'), body: undefined });
 * ```
 */
export function createStoreApi(source: ConsoleSource): ConsoleApi {
  const now = (): Date => (source.clock ?? (() => new Date()))();
  return async ({ method, path, query, body }) => {
    try {
      const answer = await route(method, path, query, body);
      return answer ?? { status: 404, body: { error: `not found: ${method} /console/api${path}` } };
    } catch (error) {
      if (error instanceof HttpError) return { status: error.status, body: { error: error.message } };
      throw error;
    }
  };

  async function route(method: string, path: string, query: URLSearchParams, body: unknown): Promise<ApiAnswer | undefined> {
    const ok = (answer: unknown): ApiAnswer => ({ status: 200, body: answer });
    const get = method === 'GET' || method === 'HEAD';
    if (path === '/overview' && get) return ok(overview(source));
    if (path === '/records' && get) {
      const pageQuery = readRecordsQuery(query);
      return ok(await source.withStore((store) => recordsPage(store, pageQuery)));
    }
    const recordPath = RECORD_PATH.exec(path);
    if (recordPath !== null && get) {
      const id = recordPath[1]!;
      return ok(
        await source.withStore(async (store) => {
          const record = await store.getMessage(id);
          if (record === undefined) throw new HttpError(404, `no record ${id}`);
          const route = source.loaded.routes.get(record.route);
          const capture = route?.config.capture === undefined ? undefined : await store.findCapture(record.route, record.id, record.createdAt);
          return recordDetail(record, capture, route);
        }),
      );
    }
    const redrivePath = REDRIVE_PATH.exec(path);
    if (redrivePath !== null && method === 'POST') {
      const id = redrivePath[1]!;
      return ok(
        await source.withStore(async (store): Promise<RedriveAnswer> => {
          const record = await store.getMessage(id);
          if (record === undefined) throw new HttpError(404, `no record ${id}`);
          const from = REDRIVE_STATES.find((state) => state === record.state);
          if (from === undefined) throw new HttpError(409, `${id} is ${record.state}; only ${REDRIVE_STATES.join(', ')} records can be redriven`);
          const requeued = await store.requeue(id, { from });
          if (requeued !== undefined) source.onRequeued?.(id);
          const current = requeued ?? (await store.getMessage(id));
          return { requeued: requeued !== undefined, record: current === undefined ? null : toRecordView(current) };
        }),
      );
    }
    const mutePath = MUTE_PATH.exec(path);
    if (mutePath !== null && method === 'POST') return ok(await muteOrUnmute(mutePath[1]!, mutePath[2] === 'mute', body));
    if (path === '/routes' && get) return ok({ routes: await source.withStore((store) => routeSummaries(source, store, now())) });
    if (path === '/credit' && get) {
      const days = wholeNumber(query.get('days'), 'days', 1, MAX_CREDIT_DAYS) ?? DEFAULT_CREDIT_DAYS;
      return ok(await source.withStore((store) => creditView(source, store, days, now())));
    }
    if (path === '/payloads' && get) {
      const routeId = query.get('route');
      if (routeId === null) throw new HttpError(400, 'name a route: ?route=<id>');
      warmPreviewWorker();
      return ok({ payloads: await source.withStore((store) => payloadChoices(source, store, routeId)) });
    }
    if (path === '/preview' && method === 'POST') {
      const parsed = PreviewRequestSchema.safeParse(body);
      if (!parsed.success) throw new HttpError(400, describeIssues(parsed.error.issues).join('; '));
      const request: PreviewRequest = parsed.data;
      return ok(await source.withStore((store) => previewRoute(source, store, request)));
    }
    const known = path === '/overview' || path === '/records' || path === '/routes' || path === '/credit' || path === '/payloads' || path === '/preview';
    if (known || recordPath !== null || redrivePath !== null || mutePath !== null) return { status: 405, body: { error: `method ${method} not allowed on /console/api${path}` } };
    return undefined;
  }

  /** The card's Mute and Unmute buttons: the same store calls as `sms-relay mute` and `unmute`. */
  async function muteOrUnmute(routeId: string, mute: boolean, body: unknown): Promise<MuteAnswer> {
    const route = source.loaded.routes.get(routeId);
    if (route === undefined) throw new HttpError(404, `no route ${routeId}`);
    return await source.withStore(async (store) => {
      if (mute) {
        const parsed = MuteRequestSchema.safeParse(body);
        if (!parsed.success) throw new HttpError(400, describeIssues(parsed.error.issues).join('; '));
        const forSeconds = parseDurationSeconds(parsed.data.for);
        if (forSeconds === undefined || forSeconds > MAX_MUTE_SECONDS) throw new HttpError(400, `for: "${parsed.data.for}" is not a duration of up to ${MAX_MUTE_SECONDS / 86_400}d; use e.g. 30m, 2h, 1d`);
        const muted = await store.muteRoute({ route: routeId, forSeconds, reason: parsed.data.reason, now: now() });
        return { route: routeId, mute: muteView(muted, route.config.timeZone, now()) };
      }
      await store.unmuteRoute({ route: routeId, now: now() });
      return { route: routeId, mute: null };
    });
  }
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
    currency: [...source.loaded.routes.values()][0]?.config.currency ?? 'TZS',
  };
}

function readRecordsQuery(query: URLSearchParams): Parameters<typeof recordsPage>[1] {
  try {
    const route = query.get('route');
    const state = query.get('state');
    const since = query.get('since');
    const cursor = query.get('cursor');
    return {
      ...(route === null || route === '' ? {} : { route }),
      ...(state === null || state === '' ? {} : { state: parseState(state, MESSAGE_STATES) as MessageState }),
      ...(since === null || since === '' ? {} : { since: parseSince(since) }),
      ...(cursor === null ? {} : { cursor }),
      limit: wholeNumber(query.get('limit'), 'limit', 1, MAX_PAGE) ?? PAGE_SIZE.default,
    };
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError(400, (error as Error).message);
  }
}

function wholeNumber(value: string | null, name: string, min: number, max: number): number | undefined {
  if (value === null || value === '') return undefined;
  const number = Number(value);
  if (!/^\d{1,6}$/.test(value) || number < min || number > max) throw new HttpError(400, `${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  return number;
}
