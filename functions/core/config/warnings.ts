import { DeliveryPolicy } from './policies';
import type { CompiledRoute, LoadedConfig } from './compile';
import { RecipientEntryKind } from '../recipients/types';

/**
 * Whether a route pages people: its source is an alerting system (one whose default delivery is
 * at-least-once: Alertmanager, Grafana, PagerDuty…), it escalates, or it sends to `oncall:`.
 */
export function isAlertingRoute(route: Pick<CompiledRoute, 'pack' | 'config' | 'recipients'>): boolean {
  return (
    route.pack.defaultDelivery === DeliveryPolicy.AtLeastOnce ||
    route.config.escalate !== undefined ||
    route.recipients.entries.some((entry) => entry.kind === RecipientEntryKind.OnCall)
  );
}

/**
 * What `validate` warns about in the credit settings: a config that pages people but keeps no
 * `balance.reserve`, so order or CI SMS can spend the last credit an alert needs. A warning, not an
 * error: a relay with alerts alone has nothing to keep the credit from.
 *
 * @example
 * ```ts
 * creditWarnings(loadConfigFile('config/prod.yaml')); // [] once prod keeps a reserve
 * ```
 */
export function creditWarnings(loaded: Pick<LoadedConfig, 'settings' | 'routes'>): string[] {
  if ((loaded.settings.balance?.reserve ?? 0) > 0) return [];
  const alerting = [...loaded.routes.values()].filter(isAlertingRoute).map((route) => route.id);
  if (alerting.length === 0) return [];
  const names = alerting.join(', ');
  return [
    `balance.reserve: none, but ${alerting.length === 1 ? 'route' : 'routes'} ${names} ${alerting.length === 1 ? 'pages' : 'page'} people; set balance.reserve (below balance.threshold) and priority: critical on ${alerting.length === 1 ? 'it' : 'them'}, so other routes cannot spend the credit an alert needs`,
  ];
}

/**
 * What `validate` warns about in a route whose alerts name who to page (Opsgenie's `responders`,
 * a pack with `recipients`): a config without people or schedules, so no responder can be found
 * and every alert goes to the route's `recipients`; or people without `email:` while the route's
 * senders name users by their username (an e-mail address, as Opsgenie's integrations do). A
 * warning: a route that pages only its recipients works.
 *
 * @example
 * ```ts
 * responderWarnings(loadConfigFile('config/local.yaml')); // []: baraka has an email
 * ```
 */
export function responderWarnings(loaded: Pick<LoadedConfig, 'onCall' | 'routes'>): string[] {
  const naming = [...loaded.routes.values()].filter((route) => route.pack.recipients !== undefined);
  if (naming.length === 0) return [];
  const { people, schedules, byEmail } = loaded.onCall;
  const names = naming.map((route) => route.id).join(', ');
  const routes = `${naming.length === 1 ? 'route' : 'routes'} ${names}`;
  if (people.size === 0 && schedules.size === 0)
    return [
      `people, schedules: none, so the responders an alert of ${routes} names page no one by name and every alert goes to the route's recipients; add people (with email:) and schedules named as in the sender`,
    ];
  if (byEmail.size === 0)
    return [
      `people: none has an email:, so a responder of ${routes} named by its username (an e-mail address, as Alertmanager and Grafana send users) pages no one; add email: to the people they name`,
    ];
  return [];
}
