/**
 * What the Credit page asks for, apart from the page itself: the console asks for it as it opens
 * on Credit, while the page's module (and uPlot, which only it uses) is still on its way.
 */
import type { CREDIT_DAYS } from '../../contract';
import { prefetch } from '../data';

// Type-only imports keep the server's modules out of the bundle; the annotations make the type
// check fail if the API's bounds change.
export const MAX_DAYS: (typeof CREDIT_DAYS)['max'] = 90;
export const DEFAULT_DAYS: (typeof CREDIT_DAYS)['default'] = 14;

/** The period last shown, kept across visits to other pages. */
export const shownPeriod = { days: DEFAULT_DAYS as number };

/** The request of the Credit view over the last `days` days. */
export const creditRequest = (days: number) => ({ query: { days } });

/** Asks for what the Credit page will show, before it is drawn. */
export function prefetchCredit(): void {
  prefetch('GET /credit', creditRequest(shownPeriod.days));
}
