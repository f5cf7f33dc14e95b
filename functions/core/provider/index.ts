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
