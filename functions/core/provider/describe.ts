import { SmsClientConfigError, SmsConnectionResetError, SmsHttpError, SmsProviderError, SmsTimeoutError, SmsTransportError } from './errors';
import { SmsDelivery, type SmsOperation, type SmsTimeoutPhase } from './types';

/** Log-safe facts about a failure: no message text, no request data, no key. */
export interface SmsErrorDescription {
  readonly name: string;
  /** `maybe-sent` for errors that are not this client's: nothing proves otherwise. */
  readonly delivery: SmsDelivery;
  readonly operation?: SmsOperation;
  readonly status?: number;
  readonly serviceError?: string;
  readonly code?: string;
  readonly phase?: SmsTimeoutPhase;
  readonly reusedSocket?: boolean;
}

/**
 * Picks the fields of an SMS client failure that are safe and useful in a structured log line.
 *
 * @example
 * ```ts
 * catch (error) { logger.error('SMS send failed', { sms: describeSmsError(error) }); }
 * // { name: 'SmsServerError', delivery: 'maybe-sent', operation: 'send', status: 503, serviceError: 'Try later' }
 * ```
 */
export function describeSmsError(error: unknown): SmsErrorDescription {
  if (error instanceof SmsClientConfigError) return { name: error.name, delivery: SmsDelivery.NOT_SENT };
  if (!(error instanceof SmsProviderError)) {
    return { name: error instanceof Error ? error.name : typeof error, delivery: SmsDelivery.MAYBE_SENT };
  }
  const status = error instanceof SmsHttpError || error instanceof SmsTransportError ? error.status : undefined;
  const serviceError = error instanceof SmsHttpError ? error.serviceError : undefined;
  const code = error instanceof SmsTransportError ? error.code : undefined;
  return {
    name: error.name,
    delivery: error.delivery,
    operation: error.operation,
    ...(status === undefined ? {} : { status }),
    ...(serviceError === undefined ? {} : { serviceError }),
    ...(code === undefined ? {} : { code }),
    ...(error instanceof SmsTimeoutError ? { phase: error.phase } : {}),
    ...(error instanceof SmsConnectionResetError ? { reusedSocket: error.reusedSocket } : {}),
  };
}
