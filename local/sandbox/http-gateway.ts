import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, readBody, sendJson } from '../http';
import { createApiKeyCheck } from './auth';
import { MAX_BODY_BYTES, parseJsonBody } from './http';
import { resolveSandboxOptions } from './options';
import { answerFault, type AnsweringFault, type FailureWriter, takeSendTurn } from './send-turn';
import { startSandboxServer, type SandboxApi } from './server';
import type { SandboxState } from './state';
import type { RunningSandbox, SandboxOptions } from './types';

/** Where the gateway sandbox takes sends: the path of the example `url`. */
export const HTTP_GATEWAY_SEND_PATH = '/api/v1/sms/send';

/**
 * The body the gateway sandbox takes, as `providers.<name>.body` must render it:
 * `{"to": {{ to | json }}, "message": {{ text | json }}}`.
 */
export const HTTP_GATEWAY_BODY = '{"to": {{ to | json }}, "message": {{ text | json }}}';

/** The header the gateway sandbox reads its key from (`headers: { X-API-Key: "{{ secret.<name>-key }}" }`). */
export const HTTP_GATEWAY_KEY_HEADER = 'x-api-key';

/**
 * Starts a stand-in for a JSON-over-HTTP SMS gateway (an Android SIM gateway, an in-house API):
 * `POST /api/v1/sms/send` with `X-API-Key` and a JSON `{ to, message }` (`to` in E.164), answered
 * `200 { id, status: "queued" }`, charged one SMS at `rate`; 401 for a wrong key, 400 for a bad
 * body, 402 when the balance is short. It has no balance endpoint (the `http` type reads none);
 * the `/_sandbox` controls are every sandbox's.
 *
 * @example
 * const gateway = await startHttpGatewaySandbox({ apiKey: 'gw-key' });
 * // url: `${gateway.baseUrl}/api/v1/sms/send`
 * await gateway.close();
 */
export async function startHttpGatewaySandbox(options: SandboxOptions): Promise<RunningSandbox> {
  const resolved = resolveSandboxOptions(options);
  const isValidKey = createApiKeyCheck(resolved.apiKey);
  return await startSandboxServer(resolved, ({ state, signal }) => gatewayApi(state, signal, isValidKey));
}

function gatewayApi(
  state: SandboxState,
  signal: AbortSignal,
  isValidKey: (presented: string | string[] | undefined) => boolean,
): SandboxApi {
  return {
    prefix: '/api',
    sendError: (response, error) => {
      const refusal = error instanceof HttpError ? error : new HttpError(500, 'internal error');
      sendJson(response, refusal.status, { error: refusal.message }, { headers: refusal.headers });
    },
    handle: async (request, response, path) => {
      if (state.outage !== undefined && state.outage.only !== 'balance') {
        request.resume();
        failWith(request, response, state.outage);
        return;
      }
      if (!isValidKey(request.headers[HTTP_GATEWAY_KEY_HEADER]))
        throw new HttpError(401, 'invalid or missing X-API-Key');
      if (path !== HTTP_GATEWAY_SEND_PATH) throw new HttpError(404, `not found: ${path}`);
      if (request.method !== 'POST') throw new HttpError(405, 'use POST', { headers: { allow: 'POST' } });
      await handleSend(state, signal, request, response);
    },
  };
}

async function handleSend(
  state: SandboxState,
  signal: AbortSignal,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const body = parseJsonBody(request.headers['content-type'], await readBody(request, { limitBytes: MAX_BODY_BYTES }));
  const { to, message } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (typeof to !== 'string' || !/^\+\d{8,15}$/.test(to)) throw new HttpError(400, 'to must be an E.164 number');
  if (typeof message !== 'string' || message.trim() === '')
    throw new HttpError(400, 'message must be a non-blank string');
  const turn = await takeSendTurn({ request, response, state, signal }, writeError);
  if (turn === undefined) return;
  const failure = turn.afterDelivery;
  // A 402 (balance short) is thrown from here, nothing charged or delivered.
  const delivered = state.deliver({ phoneNumbers: [to], message, senderId: undefined });
  if (failure !== undefined) {
    failWith(request, response, failure);
    return;
  }
  sendJson(response, 200, { id: delivered.recipients[0]?.messageId, status: 'queued' });
}

function failWith(request: IncomingMessage, response: ServerResponse, fault: AnsweringFault): void {
  answerFault(request, response, fault, writeError);
}

/** A gateway's JSON error (`{"error": …}`), with the fault's headers. */
const writeError: FailureWriter = (response, status, text, headers) =>
  sendJson(response, status, { error: text }, { headers });
