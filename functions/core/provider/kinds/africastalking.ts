import { retryAfterMs } from '../client';
import { NotSentReason, ProviderType, type BalanceOutcome, type SendOutcome, type SmsProvider } from '../outcome';
import { type RawResponse, redactor } from '../transport';
import { SmsOperation } from '../types';
import { parseEndpoint } from '../validate';
import {
  createProviderTransport,
  failedExchangeOutcome,
  isRecord,
  jsonOf,
  ProviderConfigError,
  providerKeyName,
  type ProviderContext,
  uncertainCode,
} from './common';

/** `providers.<name>` of type `africastalking`: its SMS API as Africa's Talking documents it. */
export interface AfricasTalkingProviderConfig {
  readonly type: typeof ProviderType.AfricasTalking;
  /** The account's (application's) username; `sandbox` on Africa's Talking's own sandbox. */
  readonly username: string;
  /** Sent as `from`; absent: the account's default (AFRICASTKNG). */
  readonly senderId?: string | undefined;
  /** @default AFRICASTALKING_BASE_URL */
  readonly baseUrl?: string | undefined;
  readonly timeoutMs?: number | undefined;
}

export const AFRICASTALKING_BASE_URL = 'https://api.africastalking.com';
export const AFRICASTALKING_SEND_PATH = '/version1/messaging';
export const AFRICASTALKING_USER_PATH = '/version1/user';

/**
 * Each per-recipient `statusCode` of a send answer (AT's SMS docs, and its SDKs' models). 100-102:
 * accepted. The 4xx codes come with `messageId: "None"` and a cost of `0`: refused, nothing sent.
 * 500-502 (the gateway's failures) may come after AT accepted the message: maybe sent.
 */
export const AT_STATUS = {
  Processed: 100,
  Sent: 101,
  Queued: 102,
  RiskHold: 401,
  InvalidSenderId: 402,
  InvalidPhoneNumber: 403,
  UnsupportedNumberType: 404,
  InsufficientBalance: 405,
  UserInBlacklist: 406,
  CouldNotRoute: 407,
  DoNotDisturbRejection: 409,
  InternalServerError: 500,
  GatewayError: 501,
  RejectedByGateway: 502,
} as const;

const ACCEPTED = new Set<number>([AT_STATUS.Processed, AT_STATUS.Sent, AT_STATUS.Queued]);
const REFUSED: Readonly<Record<number, NotSentReason>> = {
  [AT_STATUS.RiskHold]: NotSentReason.Rejected,
  [AT_STATUS.InvalidSenderId]: NotSentReason.Rejected,
  [AT_STATUS.InvalidPhoneNumber]: NotSentReason.InvalidNumber,
  [AT_STATUS.UnsupportedNumberType]: NotSentReason.InvalidNumber,
  [AT_STATUS.InsufficientBalance]: NotSentReason.InsufficientCredit,
  [AT_STATUS.UserInBlacklist]: NotSentReason.InvalidNumber,
  [AT_STATUS.CouldNotRoute]: NotSentReason.Rejected,
  [AT_STATUS.DoNotDisturbRejection]: NotSentReason.Rejected,
};

/** `KES 0.8000` → `{ currency: 'KES', amount: 0.8 }`; `undefined` for `0` or anything else. */
export function parseAtAmount(text: unknown): { currency: string; amount: number } | undefined {
  if (typeof text !== 'string') return undefined;
  const match = /^([A-Z]{3}) (-?\d+(?:\.\d+)?)$/.exec(text.trim());
  if (match === null) return undefined;
  return { currency: match[1]!, amount: Number(match[2]) };
}

function recipientOutcome(recipient: Record<string, unknown>, statusText: string): SendOutcome {
  const code = recipient.statusCode;
  const name = typeof recipient.status === 'string' ? recipient.status : 'no status';
  const detail = `Africa's Talking ${statusText}, recipient statusCode ${String(code)} (${name})`;
  if (typeof code === 'number' && ACCEPTED.has(code)) {
    const cost = parseAtAmount(recipient.cost);
    return {
      status: 'sent',
      ...(typeof recipient.messageId === 'string' ? { messageId: recipient.messageId } : {}),
      ...(cost === undefined ? {} : { cost }),
      ...(typeof recipient.messageParts === 'number' ? { segments: recipient.messageParts } : {}),
    };
  }
  const reason = typeof code === 'number' ? REFUSED[code] : undefined;
  if (reason !== undefined) return { status: 'not-sent', reason, detail };
  return { status: 'maybe-sent', detail };
}

/** A whole answer to `POST /version1/messaging` for one recipient. */
function sendOutcome(raw: RawResponse, redact: (text: string) => string): SendOutcome {
  const { status } = raw;
  const statusText = `answered HTTP ${status}`;
  const text = raw.body === undefined ? '' : redact(raw.body.toString('utf8')).slice(0, 200);
  if (status === 401 || status === 403) {
    return {
      status: 'not-sent',
      reason: NotSentReason.RefusedKey,
      detail: `Africa's Talking refused the key or username (HTTP ${status}): ${text}`,
    };
  }
  if (status === 400)
    return {
      status: 'not-sent',
      reason: NotSentReason.Rejected,
      detail: `Africa's Talking rejected the request (HTTP 400): ${text}`,
    };
  if (status === 402)
    return {
      status: 'not-sent',
      reason: NotSentReason.InsufficientCredit,
      detail: "Africa's Talking: insufficient balance (HTTP 402)",
    };
  if (status === 429) {
    return {
      status: 'not-sent',
      reason: NotSentReason.RateLimited,
      detail: "Africa's Talking asked to slow down (HTTP 429)",
      retryAfterMs: retryAfterMs(raw.retryAfter),
    };
  }
  if (status < 200 || status > 299)
    return { status: 'maybe-sent', detail: `Africa's Talking ${statusText}`, code: uncertainCode(status) };
  const data = isRecord(jsonOf(raw)) ? (jsonOf(raw) as Record<string, unknown>).SMSMessageData : undefined;
  if (!isRecord(data) || !Array.isArray(data.Recipients)) {
    return { status: 'maybe-sent', detail: `Africa's Talking ${statusText} without SMSMessageData.Recipients` };
  }
  const [recipient] = data.Recipients as unknown[];
  if (recipient === undefined) {
    // A refusal of the whole request ("InvalidSenderId"): nothing accepted, nothing charged.
    const message = typeof data.Message === 'string' ? redact(data.Message).slice(0, 200) : 'no message';
    return {
      status: 'not-sent',
      reason: NotSentReason.Rejected,
      detail: `Africa's Talking accepted no recipient: ${message}`,
    };
  }
  if (!isRecord(recipient))
    return { status: 'maybe-sent', detail: `Africa's Talking ${statusText} with an unreadable recipient` };
  return recipientOutcome(recipient, statusText);
}

function balanceOutcome(raw: RawResponse): BalanceOutcome {
  if (raw.status !== 200) return { ok: false, detail: `Africa's Talking user data answered HTTP ${raw.status}` };
  const body = jsonOf(raw);
  // Its docs show both `UserData` (the field table, the Java SDK) and `userData` (an example).
  const data = isRecord(body) ? (body.UserData ?? body.userData) : undefined;
  const amount = isRecord(data) ? parseAtAmount(data.balance) : undefined;
  if (amount === undefined)
    return { ok: false, detail: "Africa's Talking user data without a readable UserData.balance" };
  return { ok: true, balance: amount.amount, currency: amount.currency };
}

/**
 * The `africastalking` type: `POST /version1/messaging` (form-encoded, `apiKey` header), one
 * recipient per request so its per-recipient `statusCode` is the send's outcome, and the balance
 * from `GET /version1/user?username=`. See docs/providers.md for what was assumed of AT.
 *
 * @throws ProviderConfigError when the secret has no `<name>-key` or the URL is unusable
 */
export function createAfricasTalkingProvider(
  name: string,
  config: AfricasTalkingProviderConfig,
  context: ProviderContext,
): SmsProvider {
  const keyName = providerKeyName(name);
  const apiKey = context.secret(keyName);
  const problems: string[] = [];
  if (apiKey === undefined) problems.push(`the provider secret has no ${keyName}`);
  const endpoint = parseEndpoint(config.baseUrl ?? AFRICASTALKING_BASE_URL, 'baseUrl', problems);
  if (problems.length > 0 || endpoint === undefined || apiKey === undefined)
    throw new ProviderConfigError(name, problems);
  const redact = redactor([apiKey]);
  const transport = createProviderTransport(endpoint, { timeoutMs: config.timeoutMs, context, redact });
  const headers = { apiKey };
  const senderId = (sms: { senderId?: string }): string | undefined => sms.senderId ?? config.senderId;

  return Object.freeze<SmsProvider>({
    name,
    type: ProviderType.AfricasTalking,
    covers: (e164: string) => /^\+\d{8,15}$/.test(e164),
    async send(sms, options): Promise<SendOutcome> {
      const form = new URLSearchParams({ username: config.username, to: sms.to, message: sms.text });
      const from = senderId(sms);
      if (from !== undefined) form.set('from', from);
      try {
        const raw = await transport.call(
          {
            operation: SmsOperation.SEND,
            method: 'POST',
            path: AFRICASTALKING_SEND_PATH,
            body: form.toString(),
            contentType: 'application/x-www-form-urlencoded',
            headers,
          },
          options,
        );
        return sendOutcome(raw, redact);
      } catch (error) {
        return failedExchangeOutcome(error);
      }
    },
    async balance(options): Promise<BalanceOutcome> {
      const query = new URLSearchParams({ username: config.username });
      try {
        const raw = await transport.call(
          { operation: SmsOperation.BALANCE, method: 'GET', path: `${AFRICASTALKING_USER_PATH}?${query}`, headers },
          options,
        );
        return balanceOutcome(raw);
      } catch (error) {
        return { ok: false, detail: error instanceof Error ? error.message : 'unexpected error' };
      }
    },
    close: () => transport.close(),
  });
}
