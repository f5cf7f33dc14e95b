import { maskMsisdn } from '../core/recipients';
import { IncidentState, type Incident } from '../core/paging/incident';
import type { MessageStore } from '../store';
import { escapeHtml } from '../core/html';

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
 * and from it): `GET /a/{token}` shows the incident (the alert's text as sent, when and to whom with
 * the number masked, its timeline) and an Acknowledge button, and never changes anything (link
 * previewers and scanners open links); `POST /a/{token}` acknowledges. An unknown, malformed or
 * expired token is a bare 404: the answer never says which.
 *
 * @example
 * ```ts
 * const page = await answerAck(store, { method: 'GET', path: '/a/Zk3…', now: new Date() });
 * ```
 */
export async function answerAck(
  store: Pick<MessageStore, 'findAckToken' | 'closeIncident'>,
  { method, path, now }: { readonly method: string; readonly path: string; readonly now: Date },
): Promise<PageResponse> {
  const match = ACK_PATH.exec(path);
  const verb = method.toUpperCase();
  if (verb !== 'GET' && verb !== 'HEAD' && verb !== 'POST')
    return {
      status: 405,
      headers: { ...PAGE_HEADERS, allow: 'GET, POST' },
      html: page('Method not allowed', '<p>Open the link, or press Acknowledge on its page.</p>'),
    };
  const target = match === null ? undefined : await store.findAckToken(match[1]!, now);
  if (target === undefined)
    return { status: 404, headers: PAGE_HEADERS, html: page('Not found', '<p>This link is not valid.</p>') };
  let incident = target.incident;
  let note = '';
  if (verb === 'POST') {
    const outcome = await store.closeIncident(incident.id, {
      state: IncidentState.Acknowledged,
      by: `${maskMsisdn(target.number)} via link`,
      now,
    });
    if (outcome.incident !== undefined) incident = outcome.incident;
    note = outcome.closed ? '<p class="done">Acknowledged. Escalation has stopped.</p>' : '';
  }
  return { status: 200, headers: PAGE_HEADERS, html: incidentPage(incident, target.number, match![1]!, note) };
}

function incidentPage(incident: Incident, number: string, token: string, note: string): string {
  const state =
    incident.state === IncidentState.Open
      ? `<form method="post" action="/a/${escapeHtml(token)}"><button type="submit">Acknowledge</button></form>`
      : `<p class="state">${incident.state === IncidentState.Acknowledged ? 'Acknowledged' : 'Resolved'} by ${escapeHtml(incident.closedBy ?? 'unknown')} at ${escapeHtml(incident.closedAt ?? '')}</p>`;
  const timeline = incident.timeline
    .map((entry) => `<li><time>${escapeHtml(entry.at)}</time> ${escapeHtml(entry.detail)}</li>`)
    .join('');
  return page(
    'Incident',
    `${note}<blockquote>${escapeHtml(incident.text)}</blockquote>
<p>Sent to ${escapeHtml(maskMsisdn(number))}; opened ${escapeHtml(incident.openedAt)} (route ${escapeHtml(incident.route)}).</p>
${state}
<h2>Timeline</h2><ol>${timeline}</ol>`,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)} · sms-relay</title>
<style>body{font:16px/1.4 system-ui,sans-serif;max-width:36rem;margin:1rem auto;padding:0 1rem}blockquote{background:#f4f4f4;padding:.75rem;margin:0 0 1rem;white-space:pre-wrap}button{font-size:1.2rem;padding:.6rem 1.4rem}.done,.state{font-weight:600}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}
