/**
 * Client of the prepaid bulk SMS service. Every failure is an `SmsProviderError` whose `delivery`
 * says whether the SMS certainly was not sent or may have been.
 *
 * @example
 * ```ts
 * import { createSmsClient, describeSmsError, SmsDelivery } from './provider';
 *
 * const sms = createSmsClient({ baseUrl, apiKey });
 * try {
 *   await sms.send({ phoneNumbers: '255712345678', message: 'Your order shipped' });
 * } catch (error) {
 *   logger.error('SMS failed', { sms: describeSmsError(error) });
 * }
 * ```
 */
export { createSmsClient } from './client';
export { describeSmsError, type SmsErrorDescription } from './describe';
export {
  SmsBadRequestError,
  SmsClientClosedError,
  SmsClientConfigError,
  SmsConnectionError,
  SmsConnectionRefusedError,
  SmsConnectionResetError,
  SmsDnsError,
  SmsHttpError,
  SmsInsufficientBalanceError,
  SmsProviderError,
  SmsResponseNotJsonError,
  SmsServerError,
  SmsTimeoutError,
  SmsTransportError,
  SmsUnauthorizedError,
  SmsUnexpectedResponseError,
  SmsUnexpectedStatusError,
  SmsValidationError,
} from './errors';
export {
  SmsDelivery,
  SmsOperation,
  SmsTimeoutPhase,
  type Balance,
  type SendRequest,
  type SendResult,
  type SmsCallOptions,
  type SmsClient,
  type SmsClientOptions,
} from './types';
export { MAX_MESSAGE_LENGTH, PHONE_NUMBER_PATTERN, validateSendRequest, type NormalizedSend } from './validate';
