import { PHONE_NUMBER_PATTERN, SMS_SERVICE_PREFIX } from '../../defaults';
import { createSmsClient } from '../client';
import { SmsClientConfigError, SmsErrorCode, SmsServiceError } from '../errors';
import { NotSentReason, ProviderType, type SendOutcome, type SmsProvider } from '../outcome';
import { SendCertainty } from '../types';
import { failedExchangeOutcome, ProviderConfigError, providerKeyName, type ProviderContext } from './common';

/** `providers.<name>` of type `sms-service`: the service of docs/sms-service.md. */
export interface SmsServiceProviderConfig {
  readonly type: typeof ProviderType.SmsService;
  readonly baseUrl: string;
  readonly defaultSenderId?: string | undefined;
  readonly timeoutMs?: number | undefined;
}

/** What each of the client's error codes means for a failover, when the SMS certainly did not go out. */
const REASON_OF_CODE: Partial<Record<SmsErrorCode, NotSentReason>> = {
  [SmsErrorCode.UNAUTHORIZED]: NotSentReason.RefusedKey,
  [SmsErrorCode.INSUFFICIENT_BALANCE]: NotSentReason.InsufficientCredit,
  [SmsErrorCode.RATE_LIMITED]: NotSentReason.RateLimited,
  // Its 400s are parameter refusals (an unapproved sender ID…): the numbers were checked before.
  [SmsErrorCode.BAD_REQUEST]: NotSentReason.Rejected,
  [SmsErrorCode.VALIDATION]: NotSentReason.Rejected,
};

/** The client's error as an outcome: a refusal it names by its code, else as any exchange's failure. */
function outcomeOf(error: unknown): SendOutcome {
  const reason =
    error instanceof SmsServiceError && error.delivery === SendCertainty.NOT_SENT
      ? REASON_OF_CODE[error.code]
      : undefined;
  if (reason === undefined) return failedExchangeOutcome(error);
  const { message, retryAfterMs } = error as SmsServiceError;
  return { status: 'not-sent', reason, detail: message, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

/**
 * The `sms-service` type: the relay's own client (client.ts), its behaviour unchanged, behind the
 * provider interface. Covers `+255` numbers only.
 *
 * @throws ProviderConfigError when the secret has no key or the URL is unusable
 */
export function createSmsServiceProvider(
  name: string,
  config: SmsServiceProviderConfig,
  context: ProviderContext,
): SmsProvider {
  const keyName = providerKeyName(name);
  const apiKey = context.secret(keyName);
  if (apiKey === undefined) throw new ProviderConfigError(name, [`the provider secret has no ${keyName}`]);
  let client: ReturnType<typeof createSmsClient>;
  try {
    client = createSmsClient({
      baseUrl: config.baseUrl,
      apiKey,
      ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
      ...(context.lookup === undefined ? {} : { lookup: context.lookup }),
      ...(context.ca === undefined ? {} : { ca: context.ca }),
      ...(context.userAgent === undefined ? {} : { userAgent: context.userAgent }),
    });
  } catch (error) {
    if (error instanceof SmsClientConfigError) throw new ProviderConfigError(name, error.problems);
    throw error;
  }
  // The service texts Tanzanian numbers only (`255` and nine digits, docs/sms-service.md).
  const covers = (e164: string): boolean => e164.startsWith('+') && PHONE_NUMBER_PATTERN.test(e164.slice(1));

  return Object.freeze<SmsProvider>({
    name,
    type: ProviderType.SmsService,
    covers,
    async send(sms, options): Promise<SendOutcome> {
      if (!covers(sms.to)) {
        return {
          status: 'not-sent',
          reason: NotSentReason.InvalidNumber,
          detail: `${name} texts ${SMS_SERVICE_PREFIX} numbers only`,
        };
      }
      const senderId = sms.senderId ?? config.defaultSenderId;
      try {
        const result = await client.send(
          { phoneNumbers: [sms.to.slice(1)], message: sms.text, ...(senderId === undefined ? {} : { senderId }) },
          options,
        );
        const recipient = result.recipients[0] as { messageId?: unknown } | undefined;
        return {
          status: 'sent',
          ...(typeof recipient?.messageId === 'string' ? { messageId: recipient.messageId } : {}),
          cost: { amount: result.deducted },
          remainingBalance: result.remainingBalance,
        };
      } catch (error) {
        return outcomeOf(error);
      }
    },
    async balance(options) {
      try {
        const { balance, currency, smsRate } = await client.getBalance(options);
        return { ok: true as const, balance, currency, pricePerSms: smsRate };
      } catch (error) {
        return { ok: false as const, detail: error instanceof Error ? error.message : 'unexpected error' };
      }
    },
    close: () => client.close(),
  });
}
