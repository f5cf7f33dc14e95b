import { secretProblem } from './secret-check';
import type { AuthContext, InboundWebhook, SourcePack } from './types';

/**
 * A route secret's rotation: while senders move to a new value, the environment's secret holds the
 * new one under the route's secret name and the old one beside it under `<name>.previous`; ingest
 * accepts both (see {@link authenticatingSecret}). Retiring the old value is removing that key.
 */
export const PREVIOUS_SECRET_SUFFIX = '.previous';

/**
 * The name the old value of a route secret is kept under during a rotation.
 *
 * @example
 * ```ts
 * previousSecretName('alertmanager-token'); // 'alertmanager-token.previous'
 * ```
 */
export function previousSecretName(name: string): string {
  return `${name}${PREVIOUS_SECRET_SUFFIX}`;
}

/**
 * Which value of a route secret authenticates a webhook: the current one when it does (or when no
 * usable previous value is kept), else the previous one when that does. The caller evaluates the
 * webhook with the value returned, so a webhook signed with neither is refused as before, with the
 * current value's reason. Pure and constant-time per comparison, as each pack's `authenticate` is.
 *
 * @example
 * ```ts
 * const { secret, previous } = authenticatingSecret(route.pack, webhook, { toleranceSeconds: 300 }, current, old);
 * const evaluation = evaluateWebhook(route, webhook, { secret });
 * ```
 */
export function authenticatingSecret(
  pack: Pick<SourcePack, 'name' | 'secretKind' | 'authenticate'>,
  webhook: InboundWebhook,
  context: Omit<AuthContext, 'secret'>,
  current: string,
  previous: string | undefined,
): { readonly secret: string; readonly previous: boolean } {
  const unused = { secret: current, previous: false } as const;
  if (previous === undefined || previous === current || secretProblem(pack, previous) !== undefined) return unused;
  if (pack.authenticate(webhook, { ...context, secret: current }).ok) return unused;
  return pack.authenticate(webhook, { ...context, secret: previous }).ok
    ? { secret: previous, previous: true }
    : unused;
}
