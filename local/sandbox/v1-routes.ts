import type { IncomingMessage, ServerResponse } from 'node:http';
import { createApiKeyCheck } from './auth';
import { createRouter, HttpError, readBody, routeTable, sendJson } from '../http';
import { methodNotAllowed, notFound } from './errors';
import { MAX_BODY_BYTES, parseJsonBody, sendError } from './http';
import { parseSendRequest } from './send-request';
import { answerFault, type AnsweringFault, type FailureWriter, takeSendTurn } from './send-turn';
import type { SandboxState } from './state';
import type { DeliveredMessage } from './types';

/** What each `/v1` route gets, once the key is checked. */
interface V1Call {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly state: SandboxState;
  readonly signal: AbortSignal;
}

/** The service's own API. */
const V1_ROUTES = routeTable<V1Call>()({
  'GET /v1/account/balance': answerBalance,
  'POST /v1/sms/send': handleSend,
});
const v1Route = createRouter(V1_ROUTES);

/**
 * Builds the handler of the service's own API (everything under `/v1`).
 *
 * `signal` aborts held (delayed) sends when the sandbox closes, so `close()` never waits on them.
 *
 * @example
 * const handleV1 = createV1Handler({ state, apiKey: 'secret', signal: shutdown.signal });
 * await handleV1(request, response, '/v1/account/balance');
 */
export function createV1Handler({
  state,
  apiKey,
  signal,
}: {
  state: SandboxState;
  apiKey: string;
  signal: AbortSignal;
}): (request: IncomingMessage, response: ServerResponse, path: string) => Promise<void> {
  const isValidApiKey = createApiKeyCheck(apiKey);

  return async (request, response, path) => {
    // A service that is down answers nothing it would answer when up, not even a 401.
    if (state.outage !== undefined && outageCovers(state.outage.only, path)) {
      request.resume();
      failWith(request, response, state.outage);
      return;
    }
    // docs/sms-service.md, Authentication: every request needs the key, so it is checked before the path, the method or the body.
    const presentedKey = request.headers['x-api-key'];
    if (presentedKey === undefined) throw new HttpError(401, 'Missing API key: send it in the X-API-Key header');
    if (!isValidApiKey(presentedKey)) throw new HttpError(401, 'Invalid API key');

    const method = request.method ?? 'GET';
    const found = v1Route(method, path);
    if (found === undefined) throw notFound(method, path);
    if (found.handler === undefined) throw methodNotAllowed(method, path, found.allowed);
    await found.handler({ request, response, state, signal }, found.params);
  };
}

/** Whether an outage limited to one endpoint (`only`) covers `path`. */
function outageCovers(only: 'balance' | 'send' | undefined, path: string): boolean {
  if (only === undefined) return true;
  return only === 'balance' ? path.startsWith('/v1/account/') : path.startsWith('/v1/sms/');
}

function answerBalance({ response, state }: V1Call): void {
  const { balance, currency, smsRate } = state.account.snapshot();
  sendJson(response, 200, { success: true, balance, currency, smsRate });
}

async function handleSend({ request, response, state, signal }: V1Call): Promise<void> {
  const body = await readBody(request, { limitBytes: MAX_BODY_BYTES });
  const turn = await takeSendTurn({ request, response, state, signal }, writeError);
  if (turn === undefined) return;
  const failure = turn.afterDelivery;

  let delivered: DeliveredMessage;
  try {
    const send = parseSendRequest(parseJsonBody(request.headers['content-type'], body), (senderId) =>
      state.account.isApprovedSenderId(senderId),
    );
    delivered = state.deliver(send);
  } catch (error) {
    // A delivering fault still decides the answer: a client cannot tell what the server did before failing.
    if (failure !== undefined && error instanceof HttpError) {
      failWith(request, response, failure);
      return;
    }
    throw error;
  }

  if (failure !== undefined) {
    failWith(request, response, failure);
    return;
  }
  sendJson(response, 200, {
    success: true,
    message: `Message queued for delivery to ${delivered.recipients.length} recipient(s)`,
    senderId: delivered.senderId,
    recipients: delivered.recipients,
    deducted: delivered.deducted,
    remainingBalance: delivered.remainingBalance,
  });
}

function failWith(request: IncomingMessage, response: ServerResponse, fault: AnsweringFault): void {
  answerFault(request, response, fault, writeError);
}

/** The service's error body (`{"error": …}`), with the fault's headers. */
const writeError: FailureWriter = (response, status, text, headers) => {
  for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
  sendError(response, new HttpError(status, text));
};
