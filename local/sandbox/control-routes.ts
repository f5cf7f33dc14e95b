import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { crossSiteRefusal, HttpError, isLocalRequest, isLoopbackAddress, readBody, sendJson } from '../http';
import { InvalidSandboxFaultError, methodNotAllowed, notFound } from './errors';
import { parseSandboxFault } from './faults';
import { MAX_BODY_BYTES, parseJsonBody } from './http';
import { toMoneyUnits } from './money';
import type { SandboxState } from './state';

export const CONTROL_PREFIX = '/_sandbox';

type ControlAction = (request: IncomingMessage, state: SandboxState) => Promise<unknown> | unknown;

const outageBodySchema = z.strictObject({
  kind: z.enum(['status', 'reset']).default('status'),
  // An outage is the service failing: a 4xx is an answer, not an outage.
  status: z.number().int().min(500).max(599).default(503),
});

const outageView = (state: SandboxState) => (state.outage === undefined ? { down: false } : { down: true, ...state.outage });

const balanceBodySchema = z.strictObject({
  balance: z.number().refine((balance) => toMoneyUnits(balance) !== undefined, {
    message: 'balance must be a finite number ≥ 0 with at most 4 decimals',
  }),
});

/** Path → method → what it answers with status 200. */
const CONTROL_ROUTES: Readonly<Record<string, Readonly<Record<string, ControlAction>>>> = {
  [`${CONTROL_PREFIX}/messages`]: {
    GET: (_request, state) => ({ messages: state.messages() }),
    DELETE: (_request, state) => ({ cleared: state.clearMessages() }),
  },
  [`${CONTROL_PREFIX}/account`]: {
    GET: (_request, state) => state.account.snapshot(),
  },
  [`${CONTROL_PREFIX}/balance`]: {
    POST: async (request, state) => {
      const parsed = balanceBodySchema.safeParse(await readJson(request));
      if (!parsed.success) throw new HttpError(400, z.prettifyError(parsed.error));
      state.account.setBalance(parsed.data.balance);
      return state.account.snapshot();
    },
  },
  [`${CONTROL_PREFIX}/faults`]: {
    GET: (_request, state) => ({ queued: state.faults.size }),
    POST: async (request, state) => {
      const body = await readJson(request);
      try {
        state.faults.push(parseSandboxFault(body));
      } catch (error) {
        if (error instanceof InvalidSandboxFaultError) throw new HttpError(400, error.message, { cause: error });
        throw error;
      }
      return { queued: state.faults.size };
    },
    DELETE: (_request, state) => {
      const cleared = state.faults.size;
      state.faults.clear();
      return { cleared };
    },
  },
  [`${CONTROL_PREFIX}/outage`]: {
    GET: (_request, state) => outageView(state),
    POST: async (request, state) => {
      const parsed = outageBodySchema.safeParse(await readJson(request));
      if (!parsed.success) throw new HttpError(400, z.prettifyError(parsed.error));
      state.outage = { ...parsed.data, since: new Date().toISOString() };
      return outageView(state);
    },
    DELETE: (_request, state) => {
      state.outage = undefined;
      return outageView(state);
    },
  },
  [`${CONTROL_PREFIX}/requests`]: {
    GET: (_request, state) => ({ requests: state.requests() }),
    DELETE: (_request, state) => ({ cleared: state.clearRequests() }),
  },
};

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
    const methods = CONTROL_ROUTES[path];
    if (methods === undefined) throw notFound(method, path);
    const action = methods[method];
    if (action === undefined) throw methodNotAllowed(method, path, Object.keys(methods));
    sendJson(response, 200, await action(request, state));
  };
}

/**
 * A control body, which must say `application/json`: a browser cannot send that type to another
 * origin without a CORS preflight, which the sandbox never approves.
 */
async function readJson(request: IncomingMessage): Promise<unknown> {
  return parseJsonBody(request.headers['content-type'], await readBody(request, { limitBytes: MAX_BODY_BYTES }));
}
