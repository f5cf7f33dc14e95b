/**
 * Client of the prepaid bulk SMS service. Every failure is an `SmsServiceError` whose `delivery`
 * says whether the SMS certainly was not sent or may have been, and whose `code` says what went wrong.
 *
 * @example
 * ```ts
 * import { createSmsClient, describeSmsError, SendCertainty } from './provider';
 *
 * const sms = createSmsClient({ baseUrl, apiKey });
 * try {
 *   await sms.send({ phoneNumbers: '255712345678', message: 'Your order shipped' });
 * } catch (error) {
 *   logger.error('SMS failed', { sms: describeSmsError(error) });
 * } finally {
 *   sms.close();
 * }
 * ```
 */
export { createSmsClient, DEFAULT_RETRY_AFTER_MS, MAX_RETRY_AFTER_MS, retryAfterMs } from './client';
export {
  describeSmsError,
  SmsClientConfigError,
  SmsErrorCode,
  SmsServiceError,
  type SmsErrorDescription,
  type SmsServiceErrorOptions,
} from './errors';
export {
  SendCertainty,
  SmsOperation,
  type Balance,
  type SendRequest,
  type SendResult,
  type SmsCallOptions,
  type SmsClient,
  type SmsClientOptions,
} from './types';
export { MAX_MESSAGE_LENGTH, PHONE_NUMBER_PATTERN, validateSendRequest, type NormalizedSend } from './validate';
export {
  DEFAULT_FAILOVER_ON,
  FAILOVER_REASONS,
  FINAL_NOT_SENT_REASONS,
  NotSentReason,
  ProviderType,
  shouldFailOver,
  type BalanceOutcome,
  type FailoverReason,
  type ProviderCallOptions,
  type ProviderSms,
  type SendOutcome,
  type SmsProvider,
} from './outcome';
export { createProvider, PROVIDER_FACTORIES, type ProviderConfig } from './registry';
export { ProviderConfigError, providerKeyName, type ProviderContext } from './kinds/common';
export { AFRICASTALKING_BASE_URL, type AfricasTalkingProviderConfig } from './kinds/africastalking';
export { HTTP_ACCEPTED_DEFAULT, secretNames, type HttpProviderConfig } from './kinds/http';
export { SMS_SERVICE_PREFIX } from '../defaults';
export type { SmsServiceProviderConfig } from './kinds/sms-service';
