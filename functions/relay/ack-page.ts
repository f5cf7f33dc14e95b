import type { LoadedConfig } from '../core/config/compile';
import { escapeHtml } from '../core/html';
import { formatTime } from '../core/time-format';
import type { CompiledPaging } from '../core/paging/compile';
import { IncidentState, type Incident, pagingAction } from '../core/paging/incident';
import { maskMsisdn, maskNumbersInText, resolveRecipients } from '../core/recipients';
import { RecipientEntryKind, type CompiledRecipients } from '../core/recipients/types';
import { buildScope } from '../core/templates/scope';
import type { MessageStore } from '../store';
import { overridesFor } from './oncall';

/** The acknowledge link's path: `/a/{token}`. */
export const ACK_PATH = /^\/a\/([^/]+)$/;

/** Whether a path is an acknowledge link's (`/a/…`), which {@link answerAck} answers. */
export function isAckPath(path: string): boolean {
  return path.startsWith('/a/');
}

/** An HTML answer: status, headers and the page. */
export interface PageResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly html: string;
}

/** What the page reads of the store: the token, the close, and the overrides that say who is paged next. */
export type AckPageStore = Pick<MessageStore, 'findAckToken' | 'closeIncident'> &
  Partial<Pick<MessageStore, 'activeOverrides'>>;

/** What the page reads of the config: the people's names, the zones, the route's next steps. */
export type AckPageConfig = Pick<LoadedConfig, 'onCall' | 'routes'>;

/** What {@link answerAck} is asked. */
export interface AckRequest {
  readonly method: string;
  readonly path: string;
  readonly now: Date;
  /** Lower-case names. A POST from another site (`Origin`, `Sec-Fetch-Site`) is refused. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Without it the page shows masked numbers without names, times in UTC and no next step. */
  readonly config?: AckPageConfig;
}

/** A link is opened by previewers and scanners, and holds a credential in its path: never cached, indexed or leaked in a Referer. */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-robots-tag': 'noindex, nofollow',
  'x-content-type-options': 'nosniff',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
} as const;

/**
 * The acknowledge link, free of any platform (the Lambda handler and the local runtime translate to
 * and from it): `GET /a/{token}` shows the incident (its state first, the alert's text as sent, to
 * whom by name and masked number, when on the schedule's clock with how long ago, who would be
 * paged next and when, its timeline) and an Acknowledge button, and never changes anything (link
 * previewers and scanners open links); `POST /a/{token}` acknowledges, unless it comes from another
 * site (a forged form elsewhere: 403). An unknown, malformed or expired token is a bare 404: the
 * answer never says which.
 *
 * @example
 * ```ts
 * const page = await answerAck(store, { method: 'GET', path: '/a/Zk3…', now: new Date(), config: loaded });
 * ```
 */
export async function answerAck(
  store: AckPageStore,
  { method, path, now, headers = {}, config }: AckRequest,
): Promise<PageResponse> {
  const match = ACK_PATH.exec(path);
  const verb = method.toUpperCase();
  if (verb !== 'GET' && verb !== 'HEAD' && verb !== 'POST')
    return {
      status: 405,
      headers: { ...PAGE_HEADERS, allow: 'GET, POST' },
      html: page('Method not allowed', '<p>Open the link, or press Acknowledge on its page.</p>'),
    };
  if (verb === 'POST' && fromAnotherSite(headers))
    return {
      status: 403,
      headers: PAGE_HEADERS,
      html: page('Not acknowledged', '<p>Acknowledge from the page the SMS link opens.</p>'),
    };
  const target = match === null ? undefined : await store.findAckToken(match[1]!, now);
  if (target === undefined)
    return { status: 404, headers: PAGE_HEADERS, html: page('Not found', '<p>This link is not valid.</p>') };
  let incident = target.incident;
  let justAcknowledged = false;
  if (verb === 'POST') {
    const outcome = await store.closeIncident(incident.id, {
      state: IncidentState.Acknowledged,
      by: `${maskMsisdn(target.number)} via link`,
      now,
    });
    if (outcome.incident !== undefined) incident = outcome.incident;
    justAcknowledged = outcome.closed;
  }
  const view = await viewOf(store, config, incident, now);
  return {
    status: 200,
    headers: PAGE_HEADERS,
    html: incidentPage(incident, target.number, match![1]!, justAcknowledged, view),
  };
}

/**
 * A POST another site made a browser send: `Sec-Fetch-Site: cross-site`, or an `Origin` naming
 * another host than the one asked (`Host`, or `X-Forwarded-Host` behind a tunnel). `Origin: null`
 * passes: a browser sends it for the page's own form, whose `Referrer-Policy` is `no-referrer`.
 */
function fromAnotherSite(headers: Readonly<Record<string, string>>): boolean {
  if (headers['sec-fetch-site']?.toLowerCase() === 'cross-site') return true;
  const origin = headers['origin'];
  if (origin === undefined || origin === 'null') return false;
  let host: string;
  try {
    host = new URL(origin).host.toLowerCase();
  } catch {
    return true;
  }
  const own = [headers['host'], ...(headers['x-forwarded-host']?.split(',') ?? [])].map((each) =>
    each?.trim().toLowerCase(),
  );
  return !own.includes(host);
}

/** What the page shows beside the incident: its clock, the people's names, who is paged next. */
interface PageView {
  readonly zone: string;
  readonly now: Date;
  /** A masked number with its person's name beside it, when the config names one. */
  readonly named: (text: string) => string;
  /** The next step and how many follow it; `undefined` when none is left (or unknown). */
  readonly next?: { readonly who: string; readonly at: Date; readonly kind: string; readonly after: number };
}

async function viewOf(
  store: AckPageStore,
  config: AckPageConfig | undefined,
  incident: Incident,
  now: Date,
): Promise<PageView> {
  const route = config?.routes.get(incident.route);
  const names = new Map(
    [...(config?.onCall.people.values() ?? [])]
      .filter((person) => person.number !== '')
      .map((person) => [maskMsisdn(person.number), person.name]),
  );
  const named = (text: string): string =>
    maskNumbersInText(text).replace(/\d{4}\*{4}\d{3}/g, (masked) =>
      names.has(masked) ? `${names.get(masked)} (${masked})` : masked,
    );
  const paging = route?.paging;
  const zone = (route === undefined ? undefined : scheduleZone(route, config!)) ?? route?.config.timeZone ?? 'UTC';
  const base = { zone, now, named };
  if (route === undefined || paging === undefined || incident.state !== IncidentState.Open) return base;
  const action = pagingAction(paging, new Date(incident.openedAt), incident.actions);
  if (action === undefined) return base;
  const to: CompiledRecipients = action.step >= 0 ? paging.steps[action.step]!.to : route.recipients;
  const overrides =
    store.activeOverrides === undefined
      ? []
      : await overridesFor({ activeOverrides: store.activeOverrides }, { recipients: to }, action.dueAt);
  const numbers = resolveRecipients(to, buildScope({ body: {} }), { at: action.dueAt, overrides }).numbers;
  return {
    ...base,
    next: {
      who: numbers.length === 0 ? 'nobody (no valid number)' : named(numbers.map(maskMsisdn).join(', ')),
      at: action.dueAt,
      kind: action.kind === 'escalate' ? 'paged' : 'told again',
      after: stepsAfter(paging, new Date(incident.openedAt), incident.actions + 1),
    },
  };
}

/** The zone of the first schedule the route pages (`oncall:`), where its people read their clocks. */
function scheduleZone(
  route: NonNullable<ReturnType<AckPageConfig['routes']['get']>>,
  config: AckPageConfig,
): string | undefined {
  const lists = [route.recipients, ...(route.paging?.steps.map((step) => step.to) ?? [])];
  for (const list of lists)
    for (const entry of list.entries)
      if (entry.kind === RecipientEntryKind.OnCall) {
        const schedule = config.onCall.schedules.get(entry.schedule);
        if (schedule !== undefined) return schedule.timeZone;
      }
  return undefined;
}

function stepsAfter(paging: CompiledPaging, openedAt: Date, from: number): number {
  let count = 0;
  while (pagingAction(paging, openedAt, from + count) !== undefined) count += 1;
  return count;
}

/** `03:14 (12 min ago)` on the page's clock, in the one time format (the page names its zone once, below). */
function when(at: Date | string, view: PageView): string {
  return formatTime(at, { in: view.zone, zone: view.zone, now: view.now });
}

function incidentPage(
  incident: Incident,
  number: string,
  token: string,
  justAcknowledged: boolean,
  view: PageView,
): string {
  const e = escapeHtml;
  const closer = view.named(incident.closedBy ?? 'unknown');
  const closedAt = incident.closedAt === undefined ? '' : ` at ${when(incident.closedAt, view)}`;
  let state: string;
  if (incident.state === IncidentState.Acknowledged)
    state = `<p class="state acked">Acknowledged by ${e(closer)}${e(closedAt)}. Escalation has stopped.</p>`;
  else if (incident.state === IncidentState.Resolved)
    state = `<p class="state resolved">Resolved by ${e(closer)}${e(closedAt)}. Nobody else will be paged.</p>`;
  else state = '<p class="state open">Not acknowledged yet.</p>';
  const next = view.next;
  const stops =
    incident.state !== IncidentState.Open
      ? ''
      : `${
          next === undefined
            ? '<p class="next">Every step has been taken: nobody else will be paged. Acknowledging records that you have it.</p>'
            : `<p class="next">Acknowledging stops the escalation: next, ${e(next.who)} would be ${e(next.kind)} at ${e(when(next.at, view))}${next.after > 0 ? `, then ${next.after} more step${next.after === 1 ? '' : 's'}` : ''}.</p>`
        }
<form method="post" action="/a/${e(token)}"><button type="submit">Acknowledge</button></form>`;
  const timeline = incident.timeline
    .map(
      (entry) =>
        `<li><time datetime="${e(entry.at)}">${e(when(entry.at, view))}</time> ${e(view.named(entry.detail))}${entry.lastAt === undefined ? '' : `, last at ${e(when(entry.lastAt, view))}`}</li>`,
    )
    .join('');
  const title =
    incident.state === IncidentState.Open
      ? 'Alert: not acknowledged'
      : incident.state === IncidentState.Acknowledged
        ? 'Acknowledged'
        : 'Resolved';
  return page(
    title,
    `${justAcknowledged ? '<p class="done">Acknowledged. Escalation has stopped.</p>' : ''}${state}
<blockquote>${e(incident.text)}</blockquote>
<p>Sent to ${e(view.named(maskMsisdn(number)))}. Opened ${e(when(incident.openedAt, view))}, route ${e(incident.route)}.</p>
${stops}
<h2>Timeline</h2><ol>${timeline}</ol>
<p class="zone">Times in ${e(view.zone)}, 24-hour clock.</p>`,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)} · sms-relay</title>
<style>body{font:16px/1.4 system-ui,sans-serif;max-width:36rem;margin:1rem auto;padding:0 1rem;overflow-wrap:anywhere}h1{font-size:1.4rem}blockquote{background:#f4f4f4;padding:.75rem;margin:0 0 1rem;white-space:pre-wrap}button{font-size:1.2rem;padding:.6rem 1.4rem;width:100%}ol{padding-left:1.2rem}.done,.state{font-weight:600}.open{color:#a40000}.zone{color:#555;font-size:.9rem}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}
