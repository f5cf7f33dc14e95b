import { HttpError } from '../http';

// docs/sms-service.md, Numbers and messages: 255 followed by nine digits, no plus sign, and 160 UTF-16 code
// units (an emoji counts as two, never as one); the same contract the relay's client checks.
export { MAX_MESSAGE_LENGTH, PHONE_NUMBER_PATTERN } from '../../functions/core/defaults';
import { MAX_MESSAGE_LENGTH, PHONE_NUMBER_PATTERN } from '../../functions/core/defaults';

/** A send request that passed every parameter rule. */
export interface SendRequest {
  readonly phoneNumbers: readonly string[];
  readonly message: string;
  /** `undefined` when the request omitted it: the service's default applies. */
  readonly senderId: string | undefined;
}

/**
 * Checks the body of `POST /v1/sms/send` against its parameter rules (docs/sms-service.md, Send); throws
 * a 400 `HttpError` naming the first broken rule. Error texts never quote what the client
 * sent, so a key pasted into the wrong field cannot come back in an answer or a log.
 *
 * @example
 * parseSendRequest({ phoneNumbers: '255712345678', message: 'Hi' }, () => true);
 * // { phoneNumbers: ['255712345678'], message: 'Hi', senderId: undefined }
 */
export function parseSendRequest(body: unknown, isApprovedSenderId: (senderId: string) => boolean): SendRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'Request body must be a JSON object');
  }
  const fields = body as Record<string, unknown>;
  return {
    phoneNumbers: parsePhoneNumbers(fields['phoneNumbers']),
    message: parseMessage(fields['message']),
    senderId: parseSenderId(fields['senderId'], isApprovedSenderId),
  };
}

function parsePhoneNumbers(value: unknown): readonly string[] {
  if (value === undefined) throw new HttpError(400, 'phoneNumbers is required');
  if (typeof value !== 'string' && !Array.isArray(value)) {
    throw new HttpError(400, 'phoneNumbers must be a string or an array of strings');
  }
  // A single string stands for a one-element array (docs/sms-service.md, Send).
  const phoneNumbers: readonly unknown[] = typeof value === 'string' ? [value] : value;
  if (phoneNumbers.length === 0) throw new HttpError(400, 'phoneNumbers must not be empty');
  phoneNumbers.forEach((phoneNumber, index) => {
    if (typeof phoneNumber !== 'string') {
      throw new HttpError(400, `phoneNumbers[${index}] must be a string`);
    }
    if (!PHONE_NUMBER_PATTERN.test(phoneNumber)) {
      throw new HttpError(
        400,
        `phoneNumbers[${index}] must be 255 followed by nine digits (255XXXXXXXXX, no plus sign)`,
      );
    }
  });
  return phoneNumbers as readonly string[];
}

function parseMessage(value: unknown): string {
  if (value === undefined) throw new HttpError(400, 'message is required');
  if (typeof value !== 'string') throw new HttpError(400, 'message must be a string');
  // A blank SMS is almost certainly a template bug upstream; refusing it is the conservative reading of "required".
  if (value.trim().length === 0) throw new HttpError(400, 'message must not be empty or blank');
  if (value.length > MAX_MESSAGE_LENGTH) {
    throw new HttpError(400, `message must be at most ${MAX_MESSAGE_LENGTH} characters, got ${value.length}`);
  }
  return value;
}

function parseSenderId(value: unknown, isApprovedSenderId: (senderId: string) => boolean): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new HttpError(400, 'senderId must be a string');
  if (!isApprovedSenderId(value)) {
    throw new HttpError(400, 'senderId is not an approved sender ID for this account');
  }
  return value;
}
