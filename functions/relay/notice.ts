import { fitMessage } from '../core/fitting/fit';
import { DeliveryPolicy } from '../core/config/policies';
import type { NewMessage } from '../store';

/**
 * One SMS of the relay's own (low balance, held-back summary), measured like any other message:
 * look-alikes replaced, cut to one part on a word boundary, encoding and segments counted. Notices
 * are at-most-once: a duplicate warning costs money and says nothing new.
 *
 * @example
 * ```ts
 * await store.recordNotice({ kind: 'held-summary', route, key, message: noticeMessage(text, to, senderId) });
 * ```
 */
export function noticeMessage(text: string, to: readonly string[], senderId: string | undefined): NewMessage {
  const fitted = fitMessage(text, { policy: 'truncate' });
  // Notice texts are built by the relay and never empty; a failure here is a bug worth seeing.
  if (!fitted.ok) throw new Error(`notice text cannot be sent: ${fitted.reason}`);
  const [part] = fitted.parts;
  return {
    index: 0,
    part: 1,
    parts: 1,
    text: part!.text,
    to: [...new Set(to)],
    ...(senderId === undefined ? {} : { senderId }),
    encoding: part!.encoding,
    characters: part!.characters,
    segments: part!.segments,
    delivery: DeliveryPolicy.AtMostOnce,
  };
}
