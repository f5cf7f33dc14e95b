import { DEFAULT_LIMIT, fitMessage, type FittedPart, measureMessage } from '../fitting';
import { PAGING } from '../defaults';

/** The acknowledge link of a token on an origin: `<baseUrl>/a/<token>`. */
export function ackLink(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${PAGING.linkPath}${token}`;
}

/**
 * One SMS that ends with an acknowledge link: the text is fitted (truncated with `...`) into the
 * room the link leaves, and the link follows whole after a space, so a phone always shows a link
 * it can open. One part whatever the route's `length` (each SMS of an incident carries its link).
 * `undefined` when the text is empty, or when the link leaves it no room at all.
 *
 * @example
 * ```ts
 * fitWithLink('[FIRING] DiskFull on db-1', 'https://sms.example.co.tz/a/Zk3…');
 * ```
 */
export function fitWithLink(text: string, link: string): FittedPart | undefined {
  const room = DEFAULT_LIMIT - link.length - 1;
  if (room < 16) return undefined;
  const fitted = fitMessage(text, { policy: 'truncate', limit: room });
  if (!fitted.ok) return undefined;
  return measureMessage(`${fitted.parts[0]!.text} ${link}`);
}
