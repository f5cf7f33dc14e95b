import { userInfo } from 'node:os';
import { DISMISS } from '../../functions/core/defaults';

/**
 * Who a decision made on this machine is recorded as when nobody names one (`sms-relay dismiss`
 * without `--by`, `POST /_relay/dismiss` without `by`, the console's Dismiss): the OS user, who
 * alone can read the runtime's secret (`runtime.json`, mode 0600) that `/_relay` and the console
 * require.
 *
 * @example
 * ```ts
 * await store.dismiss(id, { by: localOperator(), reason });
 * ```
 */
export function localOperator(): string {
  let name: string | undefined;
  try {
    name = userInfo().username;
  } catch {
    // No passwd entry (a container's arbitrary uid): the environment is all there is.
  }
  const found = (name || process.env['USER'] || process.env['USERNAME'] || 'unknown').trim() || 'unknown';
  return found.slice(0, DISMISS.maxByChars);
}
