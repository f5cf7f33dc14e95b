import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isValidPhoneNumber } from 'libphonenumber-js/max';
import { countSegments } from '../../functions/core/fitting';
import { AT_STATUS } from '../../functions/core/provider/kinds/africastalking';
import { HttpError, readBody, requestQuery, sendJson, sendText } from '../http';
import { createApiKeyCheck } from './auth';
import { MAX_BODY_BYTES } from './http';
import { resolveSandboxOptions } from './options';
import { answerFault, type AnsweringFault, type FailureWriter, takeSendTurn } from './send-turn';
import { startSandboxServer, type SandboxApi } from './server';
import type { SandboxState } from './state';
import type { RunningSandbox, SandboxOptions } from './types';

/** Africa's Talking's own sandbox account is named `sandbox`; so is this one's unless told. */
export const AT_SANDBOX_USERNAME = 'sandbox';
/** The sender name AT uses when a send names no `from` (its docs: "defaults to AFRICASTKNG"). */
export const AT_DEFAULT_SENDER = 'AFRICASTKNG';
const UNAUTHORIZED_TEXT = 'The supplied authentication is invalid';

export interface AfricasTalkingSandboxOptions extends Omit<SandboxOptions, 'defaultSenderId'> {
  /** The account's username every request must name. @default 'sandbox' */
  readonly username?: string;
}

/**
 * Starts a faithful stand-in for Africa's Talking's SMS API (docs/providers.md): `POST
 * /version1/messaging` (form-encoded, `apiKey` header, answered 201 with `SMSMessageData` and a
 * `statusCode` per recipient, charged per segment) and `GET /version1/user?username=` (the
 * balance as `UserData.balance`, `"TZS 9980.0000"`), beside the `/_sandbox` controls every
 * sandbox has. `senderIds` are the account's approved `from` names.
 *
 * @example
 * const at = await startAfricasTalkingSandbox({ apiKey: 'at-key', username: 'acme', currency: 'KES', rate: 0.8 });
 * await at.close();
 */
export async function startAfricasTalkingSandbox(options: AfricasTalkingSandboxOptions): Promise<RunningSandbox> {
  const resolved = resolveSandboxOptions({ ...options, defaultSenderId: AT_DEFAULT_SENDER });
  const username = options.username ?? AT_SANDBOX_USERNAME;
  return await startSandboxServer(resolved, ({ state, signal }) =>
    africasTalkingApi({ state, signal, username, isValidKey: createApiKeyCheck(resolved.apiKey) }),
  );
}

interface AtContext {
  readonly state: SandboxState;
  readonly signal: AbortSignal;
  readonly username: string;
  readonly isValidKey: (presented: string | string[] | undefined) => boolean;
}

function africasTalkingApi(context: AtContext): SandboxApi {
  const { state } = context;
  return {
    prefix: '/version1',
    sendError: (response, error) => {
      // AT answers its refusals in plain text (an Akka-style rejection), not JSON.
      const refusal = error instanceof HttpError ? error : new HttpError(500, 'There was an internal server error.');
      sendText(response, refusal.status, refusal.message, { headers: refusal.headers });
    },
    handle: async (request, response, path) => {
      const isSend = path === '/version1/messaging';
      if (
        state.outage !== undefined &&
        (state.outage.only === undefined || (state.outage.only === 'send') === isSend)
      ) {
        request.resume();
        failWith(request, response, state.outage);
        return;
      }
      if (!context.isValidKey(request.headers.apikey)) throw new HttpError(401, UNAUTHORIZED_TEXT);
      const method = request.method ?? 'GET';
      if (isSend && method === 'POST') return await handleSend(context, request, response);
      if (path === '/version1/user' && method === 'GET') return answerUser(context, request, response);
      throw new HttpError(404, 'The requested resource could not be found.');
    },
  };
}

function answerUser({ state, username }: AtContext, request: IncomingMessage, response: ServerResponse): void {
  const named = new URLSearchParams(requestQuery(request.url)).get('username');
  if (named !== username) throw new HttpError(401, UNAUTHORIZED_TEXT);
  sendJson(response, 200, { UserData: { balance: amountText(state.account.currency, state.account.balance) } });
}

/** AT's money format: the currency, a space, the amount with four decimals (`KES 0.8000`). */
function amountText(currency: string, amount: number): string {
  return `${currency} ${amount.toFixed(4)}`;
}

interface AtRecipient {
  readonly statusCode: number;
  readonly number: string;
  readonly status: string;
  readonly cost: string;
  readonly messageId: string;
  readonly messageParts?: number;
}

function refused(number: string, statusCode: number, status: string): AtRecipient {
  return { statusCode, number, status, cost: '0', messageId: 'None' };
}

async function handleSend(context: AtContext, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { state, signal } = context;
  const body = await readBody(request, { limitBytes: MAX_BODY_BYTES });
  const mediaType = request.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
  if (mediaType !== 'application/x-www-form-urlencoded') {
    throw new HttpError(400, 'The request content was malformed: expected application/x-www-form-urlencoded');
  }
  // Its server answers XML unless asked for JSON; this stand-in speaks JSON only and says so.
  if (!(request.headers.accept ?? '').includes('application/json')) {
    throw new HttpError(406, 'This sandbox answers application/json only: send Accept: application/json');
  }
  const form = new URLSearchParams(body.toString('utf8'));
  if (form.get('username') !== context.username) throw new HttpError(401, UNAUTHORIZED_TEXT);
  const to = form.get('to');
  const message = form.get('message');
  if (to === null || to.trim() === '') throw new HttpError(400, 'The request content was malformed: to is required');
  if (message === null || message === '') {
    throw new HttpError(400, 'The request content was malformed: message is required');
  }
  const turn = await takeSendTurn({ request, response, state, signal }, writeText);
  if (turn === undefined) return;
  const failure = turn.afterDelivery;

  const from = form.get('from') ?? undefined;
  const currency = state.account.currency;
  let recipients: AtRecipient[] = [];
  let summary: string;
  if (from !== undefined && !state.account.isApprovedSenderId(from)) {
    // AT refuses the whole request in the summary, with no recipient at all.
    summary = 'InvalidSenderId';
  } else {
    const parts = countSegments(message);
    recipients = to.split(',').map((entry) => deliverTo(state, entry.trim(), { message, from, parts }));
    const sent = recipients.filter((recipient) => recipient.statusCode === AT_STATUS.Sent);
    const total = sent.length * parts * state.account.smsRate;
    summary = `Sent to ${sent.length}/${recipients.length} Total Cost: ${sent.length === 0 ? '0' : amountText(currency, total)}`;
  }
  if (failure !== undefined) {
    failWith(request, response, failure);
    return;
  }
  sendJson(response, 201, { SMSMessageData: { Message: summary, Recipients: recipients } });
}

function deliverTo(
  state: SandboxState,
  number: string,
  { message, from, parts }: { message: string; from: string | undefined; parts: number },
): AtRecipient {
  if (!/^\+\d{8,15}$/.test(number) || !isValidPhoneNumber(number)) {
    return refused(number, AT_STATUS.InvalidPhoneNumber, 'InvalidPhoneNumber');
  }
  try {
    const messageId = `ATXid_${randomBytes(16).toString('hex')}`;
    const delivered = state.deliver(
      { phoneNumbers: [number], message, senderId: from },
      { units: parts, messageId: () => messageId },
    );
    return {
      statusCode: AT_STATUS.Sent,
      number,
      status: 'Success',
      cost: amountText(state.account.currency, delivered.deducted),
      messageId,
      messageParts: parts,
    };
  } catch (error) {
    if (error instanceof HttpError && error.status === 402) {
      return refused(number, AT_STATUS.InsufficientBalance, 'InsufficientBalance');
    }
    throw error;
  }
}

function failWith(request: IncomingMessage, response: ServerResponse, fault: AnsweringFault): void {
  answerFault(request, response, fault, writeText);
}

/** Africa's Talking answers its errors in plain text. */
const writeText: FailureWriter = (response, status, text, headers) => sendText(response, status, text, { headers });
