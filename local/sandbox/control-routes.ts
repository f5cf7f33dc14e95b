import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import {
  createRouter,
  crossSiteRefusal,
  HttpError,
  isLocalRequest,
  isLoopbackAddress,
  readBody,
  routeTable,
  sendJson,
} from '../http';
import { InvalidSandboxFaultError, methodNotAllowed, notFound } from './errors';
import { parseSandboxFault } from './faults';
import { MAX_BODY_BYTES, parseJsonBody } from './http';
import { toMoneyUnits } from './money';
import type { SandboxState } from './state';

export const CONTROL_PREFIX = '/_sandbox';

/** What each control route gets; it answers with the body of a 200. */
interface ControlCall {
  readonly request: IncomingMessage;
  readonly state: SandboxState;
}

const outageBodySchema = z.strictObject({
  kind: z.enum(['status', 'reset']).default('status'),
  // An outage is the service failing: a 4xx is an answer, not an outage.
  status: z.number().int().min(500).max(599).default(503),
  only: z.enum(['balance', 'send']).optional(),
});

const rateLimitBodySchema = z.strictObject({ maxPerSecond: z.number().int().min(1).max(10_000) });

const outageView = (state: SandboxState) =>
  state.outage === undefined ? { down: false } : { down: true, ...state.outage };

const balanceBodySchema = z.strictObject({
  balance: z.number().refine((balance) => toMoneyUnits(balance) !== undefined, {
    message: 'balance must be a finite number ≥ 0 with at most 4 decimals',
  }),
});

/** Each control endpoint: what it answers with status 200. */
const CONTROL_ROUTES = routeTable<ControlCall, unknown>()({
  'GET /_sandbox/messages': ({ state }) => ({ messages: state.messages() }),
  'DELETE /_sandbox/messages': ({ state }) => ({ cleared: state.clearMessages() }),
  'GET /_sandbox/account': ({ state }) => state.account.snapshot(),
  'POST /_sandbox/balance': setBalance,
  'GET /_sandbox/faults': ({ state }) => ({ queued: state.faults.size }),
  'POST /_sandbox/faults': pushFault,
  'DELETE /_sandbox/faults': ({ state }) => ({ cleared: clearFaults(state) }),
  'GET /_sandbox/outage': ({ state }) => outageView(state),
  'POST /_sandbox/outage': startOutage,
  'DELETE /_sandbox/outage': ({ state }) => endOutage(state),
  'GET /_sandbox/rate-limit': ({ state }) => ({ maxPerSecond: state.rateLimit?.maxPerSecond ?? null }),
  'POST /_sandbox/rate-limit': setRateLimit,
  'DELETE /_sandbox/rate-limit': ({ state }) => {
    state.rateLimit = undefined;
    return { maxPerSecond: null };
  },
  'GET /_sandbox/requests': ({ state }) => ({ requests: state.requests() }),
  'DELETE /_sandbox/requests': ({ state }) => ({ cleared: state.clearRequests() }),
});
const controlRoute = createRouter(CONTROL_ROUTES);

async function setBalance({ request, state }: ControlCall): Promise<unknown> {
  const parsed = balanceBodySchema.safeParse(await readJson(request));
  if (!parsed.success) throw new HttpError(400, z.prettifyError(parsed.error));
  state.account.setBalance(parsed.data.balance);
  return state.account.snapshot();
}

async function pushFault({ request, state }: ControlCall): Promise<unknown> {
  const body = await readJson(request);
  try {
    state.faults.push(parseSandboxFault(body));
  } catch (error) {
    if (error instanceof InvalidSandboxFaultError) throw new HttpError(400, error.message, { cause: error });
    throw error;
  }
  return { queued: state.faults.size };
}

function clearFaults(state: SandboxState): number {
  const cleared = state.faults.size;
  state.faults.clear();
  return cleared;
}

async function startOutage({ request, state }: ControlCall): Promise<unknown> {
  const parsed = outageBodySchema.safeParse(await readJson(request));
  if (!parsed.success) throw new HttpError(400, z.prettifyError(parsed.error));
  state.outage = { ...parsed.data, since: new Date().toISOString() };
  return outageView(state);
}

async function setRateLimit({ request, state }: ControlCall): Promise<unknown> {
  const parsed = rateLimitBodySchema.safeParse(await readJson(request));
  if (!parsed.success) throw new HttpError(400, z.prettifyError(parsed.error));
  state.rateLimit = parsed.data;
  return { maxPerSecond: parsed.data.maxPerSecond };
}

function endOutage(state: SandboxState): unknown {
  state.outage = undefined;
  return outageView(state);
}

/**
 * Builds the handler of the control endpoints under `/_sandbox` (see `types.ts`). No API key:
 * they refuse any caller that is not on loopback, whose Host is not the loopback address and
 * port, or whose `Origin`/`Sec-Fetch-Site` names another site (a page the browser shows), instead;
 * a POST must be `application/json`.
 *
 * @example
 * const handleControl = createControlHandler({ state });
 * await handleControl(request, response, '/_sandbox/messages');
 */
export function createControlHandler({
  state,
}: {
  state: SandboxState;
}): (request: IncomingMessage, response: ServerResponse, path: string) => Promise<void> {
  return async (request, response, path) => {
    if (!isLoopbackAddress(request.socket.remoteAddress)) {
      throw new HttpError(403, 'Sandbox control endpoints answer loopback clients only');
    }
    // A page on another site can reach loopback through DNS rebinding, but not with a loopback Host.
    if (!isLocalRequest(request)) throw new HttpError(403, 'local requests only');
    // A page of any site can make the browser send a "simple" request (a text/plain POST) to 127.0.0.1.
    const refusal = crossSiteRefusal(request);
    if (refusal !== undefined) throw new HttpError(403, refusal);
    const method = request.method ?? 'GET';
    const found = controlRoute(method, path);
    if (found === undefined) throw notFound(method, path);
    if (found.handler === undefined) throw methodNotAllowed(method, path, found.allowed);
    sendJson(response, 200, await found.handler({ request, state }, found.params));
  };
}

/**
 * A control body, which must say `application/json`: a browser cannot send that type to another
 * origin without a CORS preflight, which the sandbox never approves.
 */
async function readJson(request: IncomingMessage): Promise<unknown> {
  return parseJsonBody(request.headers['content-type'], await readBody(request, { limitBytes: MAX_BODY_BYTES }));
}
