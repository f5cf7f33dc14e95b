import type { RouteConfig } from '../config/schema';
import type { Numbering } from '../recipients/numbering';
import { PAGING } from '../defaults';
import { DEFAULT_LIMIT } from '../fitting';
import { compileRecipients } from '../recipients/compile';
import { RecipientEntryKind, type CompiledRecipients } from '../recipients/types';
import type { OnCallDirectory } from '../oncall/schedule';
import type { CompiledCondition, CompiledTemplate, TemplateEngine } from '../templates/types';
import { SOURCES } from '../sources/registry';
import { attemptFor } from '../config/attempt';

/** One escalation step, compiled: who is told `afterSeconds` after the incident's first SMS. */
export interface CompiledStep {
  readonly afterSeconds: number;
  readonly to: CompiledRecipients;
}

/** A route's paging settings, compiled: present when the route opens incidents. */
export interface CompiledPaging {
  /** Renders the incident's key from the webhook's scope. */
  readonly key: CompiledTemplate;
  /** True for a webhook that resolves its incident. */
  readonly resolved: CompiledCondition;
  /** Where the rule came from, for `validate`. */
  readonly ruleFrom: 'route' | 'source';
  readonly steps: readonly CompiledStep[];
  readonly renotify?: { readonly everySeconds: number; readonly max: number };
  /** Present when every SMS of an incident ends with an acknowledge link; `baseUrl` absent: the relay's own URL. */
  readonly ack?: { readonly baseUrl?: string };
}

/** The characters an acknowledge link takes at the end of a text: a space, the origin, `/a/` and the token. */
export function linkLength(baseUrl: string): number {
  return 1 + baseUrl.length + PAGING.linkPath.length + Math.ceil((PAGING.tokenBytes * 8) / 6);
}

/**
 * Compiles `escalate`, `renotify`, `ack` and `incident` of one route, adding a problem per field
 * that fails. A route with none of them pages no one (`undefined`), unless its source's rule is
 * `always` (Opsgenie's); one with `incident:` alone opens incidents (so `sms-relay incidents` and
 * `ack` see them) without escalating.
 *
 * @example
 * ```ts
 * const paging = compilePaging('alerts', route, engine, problems, onCall);
 * ```
 */
export function compilePaging(
  id: string,
  route: RouteConfig,
  engine: TemplateEngine,
  problems: string[],
  onCall: OnCallDirectory,
  numbering?: Numbering,
): CompiledPaging | undefined {
  if (
    route.escalate === undefined &&
    route.renotify === undefined &&
    route.ack === undefined &&
    route.incident === undefined &&
    SOURCES[route.source].incident?.always !== true
  )
    return undefined;
  const at = (field: string): string => `routes.${id}.${field}`;
  const rule = route.incident ?? SOURCES[route.source].incident;
  if (rule === undefined) {
    const keys = ['escalate', 'renotify', 'ack'].filter(
      (key) => route[key as 'escalate' | 'renotify' | 'ack'] !== undefined,
    );
    problems.push(
      `${at(keys[0] ?? 'incident')}: source ${route.source} has no notion of an alert that resolves; say how with incident: { key: "<template>", resolved: "<condition>" }`,
    );
    return undefined;
  }
  if (route.fanOut !== undefined && route.incident === undefined) {
    // The source's rule names the webhook's incident, so every item would share one: the route says its item's.
    const keys = ['escalate', 'renotify', 'ack'].filter(
      (key) => route[key as 'escalate' | 'renotify' | 'ack'] !== undefined,
    );
    problems.push(
      `${at(keys[0] ?? 'incident')}: a fanOut route opens an incident per item; say how with incident: { key: "<template of item>", resolved: "<condition on item>" }, e.g. { key: "{{ item.fingerprint }}", resolved: "item.status == 'resolved'" }`,
    );
    return undefined;
  }
  const before = problems.length;
  const attempt = attemptFor(problems, at);
  const ruleField = route.incident === undefined ? undefined : 'incident';
  const key = attempt(ruleField === undefined ? 'incident' : 'incident.key', () => engine.compileTemplate(rule.key));
  const resolved = attempt(ruleField === undefined ? 'incident' : 'incident.resolved', () =>
    engine.compileCondition(rule.resolved),
  );
  const steps = (route.escalate ?? []).flatMap((step, index) => {
    const to = attempt(`escalate[${index}].to`, () =>
      compileRecipients(step.to, engine, undefined, onCall, undefined, numbering),
    );
    if (to === undefined) return [];
    if (to.entries.some((entry) => entry.kind === RecipientEntryKind.Template)) {
      problems.push(
        `${at(`escalate[${index}].to`)}: an escalation is sent without a webhook, so its recipients are numbers, person:<name> or oncall:<schedule>, not templates`,
      );
      return [];
    }
    return [{ afterSeconds: step.after, to }];
  });
  if (problems.length > before || key === undefined || resolved === undefined) return undefined;
  return {
    key,
    resolved,
    ruleFrom: route.incident === undefined ? 'source' : 'route',
    steps,
    ...(route.renotify === undefined
      ? {}
      : { renotify: { everySeconds: route.renotify.every, max: route.renotify.max } }),
    ...(route.ack === undefined ? {} : { ack: route.ack.baseUrl === undefined ? {} : { baseUrl: route.ack.baseUrl } }),
  };
}

/**
 * What `validate` warns about paging: a route whose `ack.baseUrl` leaves fewer than
 * {@link PAGING.minTextChars} characters of an SMS for the alert's text. (Without `baseUrl` the
 * origin is known only when the relay runs.)
 *
 * @example
 * ```ts
 * pagingWarnings(loaded.routes); // ['routes.alerts.ack.baseUrl: the acknowledge link leaves 41 characters …']
 * ```
 */
export function pagingWarnings(routes: ReadonlyMap<string, { readonly paging?: CompiledPaging }>): string[] {
  return [...routes].flatMap(([id, route]) => {
    const baseUrl = route.paging?.ack?.baseUrl;
    if (baseUrl === undefined) return [];
    const room = DEFAULT_LIMIT - linkLength(baseUrl);
    return room < PAGING.minTextChars
      ? [
          `routes.${id}.ack.baseUrl: the acknowledge link leaves ${room} characters of a ${DEFAULT_LIMIT}-character SMS for the text (fewer than ${PAGING.minTextChars}); use a shorter origin`,
        ]
      : [];
  });
}
