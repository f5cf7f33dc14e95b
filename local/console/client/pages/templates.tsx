/** Templates: try a route's template, condition and recipients on a captured, fixture or pasted payload. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ClientRequest, Overview, PayloadChoice, PreviewAnswer } from '../../contract';
import { useApi } from '../data';
import { num, plural } from '../format';
import { CopyButton, ErrorBox, RouteOptions } from '../ui';

const DEBOUNCE_MS = 120;

const choiceKey = (choice: PayloadChoice) => `${choice.kind}:${choice.id}`;

// Kept while the console is open, so leaving the page and coming back keeps the work.
let lastRoute = '';

export function TemplatesPage({ overview }: { overview: Overview }) {
  const [route, setRoute] = useState(() =>
    overview.routes.some((r) => r.id === lastRoute) ? lastRoute : (overview.routes[0]?.id ?? ''),
  );
  const [picked, setPicked] = useState('');
  const [body, setBody] = useState('');
  const [edited, setEdited] = useState(false);
  const [template, setTemplate] = useState('');
  const [when, setWhen] = useState('');
  const [recipients, setRecipients] = useState('');
  const yamlRef = useRef<HTMLPreElement>(null);

  useEffect(() => {
    lastRoute = route;
    // A new route starts from its own settings.
    const settings = overview.routes.find((r) => r.id === route);
    setTemplate(settings?.template ?? '');
    setWhen(settings?.when ?? '');
    setRecipients('');
  }, [route]);

  // The route's payloads; the first one is picked.
  const offered = useApi('GET /payloads', route ? { query: { route } } : null);
  const payloads = offered.data?.payloads ?? (offered.error ? [] : null);
  const payloadsError = offered.error ? `Payloads: ${offered.error.message}` : null;
  useEffect(() => {
    const first = offered.data?.payloads[0];
    setPicked(first ? choiceKey(first) : '');
    setBody(first ? first.body : '');
    setEdited(false);
  }, [offered.data]);

  const choice = payloads?.find((p) => choiceKey(p) === picked) ?? null;

  // The preview, debounced; the answer shown stays until the next one arrives.
  const previewRequest =
    !route || payloads === null ? null : buildRequest({ route, choice, body, edited, template, when, recipients });
  const preview = useApi('POST /preview', previewRequest === null ? null : { body: previewRequest }, {
    debounceMs: DEBOUNCE_MS,
    keep: true,
  });
  const answer = preview.data;
  const previewError = preview.error ? `Preview: ${preview.error.message}` : null;
  const pending = preview.loading;

  const pick = (key: string) => {
    setPicked(key);
    const next = payloads?.find((p) => choiceKey(p) === key);
    setBody(next ? next.body : '');
    setEdited(false);
  };

  return (
    <div class="page templates">
      <div class="columns">
        <div class="col inputs">
          <div class="row">
            <label class="grow">
              Route
              <select data-testid="tpl-route" value={route} onChange={(e) => setRoute(e.currentTarget.value)}>
                <RouteOptions routes={overview.routes} />
              </select>
            </label>
            <label class="grow">
              Payload
              <select
                data-testid="tpl-payload"
                value={picked}
                onChange={(e) => pick(e.currentTarget.value)}
                disabled={payloads === null}
              >
                <option value="">{payloads === null ? 'loading…' : 'pasted body'}</option>
                <PayloadGroup label="Captured webhooks" choices={payloads?.filter((p) => p.kind === 'capture') ?? []} />
                <PayloadGroup label="Examples" choices={payloads?.filter((p) => p.kind === 'fixture') ?? []} />
              </select>
            </label>
          </div>
          <ErrorBox error={payloadsError} />
          <label>
            <span class="label-line">
              Body
              <span class="muted">
                {choice
                  ? edited
                    ? `edited from ${choice.label}: sent as a pasted body`
                    : `${choice.kind} ${choice.id}`
                  : 'pasted'}
              </span>
              {edited && choice ? (
                <button type="button" class="link" onClick={() => pick(picked)}>
                  revert
                </button>
              ) : null}
            </span>
            <textarea
              data-testid="tpl-body"
              class="code"
              rows={12}
              spellcheck={false}
              value={body}
              placeholder="Pick a payload above, or paste a webhook body here"
              onInput={(e) => {
                setBody(e.currentTarget.value);
                setEdited(true);
              }}
            />
          </label>
          <label>
            <span class="label-line">
              Template <span class="muted">empty: the route's template</span>
            </span>
            <textarea
              data-testid="tpl-template"
              class="code"
              rows={4}
              spellcheck={false}
              value={template}
              placeholder="empty: the source's default template"
              onInput={(e) => setTemplate(e.currentTarget.value)}
            />
          </label>
          <label>
            <span class="label-line">
              When <span class="muted">empty: the route's condition</span>
            </span>
            <input
              data-testid="tpl-when"
              class="code"
              type="text"
              spellcheck={false}
              value={when}
              placeholder="empty: every webhook"
              onInput={(e) => setWhen(e.currentTarget.value)}
            />
          </label>
          <label>
            <span class="label-line">
              Recipients <span class="muted">one per line; empty: the route's recipients</span>
            </span>
            <textarea
              data-testid="tpl-recipients"
              class="code"
              rows={3}
              spellcheck={false}
              value={recipients}
              placeholder={`route's recipients: ${overview.routes.find((r) => r.id === route)?.recipients.join(', ') ?? ''}`}
              onInput={(e) => setRecipients(e.currentTarget.value)}
            />
          </label>
        </div>
        <div class="col results">
          <ErrorBox error={previewError} />
          <Result
            answer={answer}
            pending={pending}
            yamlRef={yamlRef}
            noPayload={payloads !== null && !choice && body.trim() === ''}
          />
        </div>
      </div>
    </div>
  );
}

function PayloadGroup({ label, choices }: { label: string; choices: readonly PayloadChoice[] }) {
  if (choices.length === 0) return null;
  return (
    <optgroup label={label}>
      {choices.map((p) => (
        <option key={choiceKey(p)} value={choiceKey(p)}>
          {p.label}
        </option>
      ))}
    </optgroup>
  );
}

function buildRequest(input: {
  route: string;
  choice: PayloadChoice | null;
  body: string;
  edited: boolean;
  template: string;
  when: string;
  recipients: string;
}): ClientRequest<'POST /preview'>['body'] | null {
  const { route, choice, body, edited } = input;
  const lines = input.recipients
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  // Template and condition start as the route's own, so an emptied field means "none".
  const overrides = {
    template: input.template,
    when: input.when,
    ...(lines.length > 0 ? { recipients: lines } : {}),
  };
  if (choice && !edited)
    return { route, ...overrides, ...(choice.kind === 'capture' ? { capture: choice.id } : { fixture: choice.id }) };
  if (body.trim() === '') return null;
  return { route, ...overrides, payload: body, ...(choice ? { headers: choice.headers } : {}) };
}

function verdictClass(verdict: string): string {
  if (verdict === 'send') return 'ok';
  if (verdict === 'invalid') return 'bad';
  if (verdict === 'duplicate') return 'warn';
  return 'neutral';
}

function Result({
  answer,
  pending,
  yamlRef,
  noPayload,
}: {
  answer: PreviewAnswer | null;
  pending: boolean;
  yamlRef: { current: HTMLPreElement | null };
  noPayload: boolean;
}) {
  if (noPayload) return <p class="empty">Pick a payload or paste a body to see what the route would send.</p>;
  if (!answer) return <p class="muted">{pending ? 'Rendering…' : ''}</p>;
  return (
    <div class={pending ? 'stale' : undefined}>
      <div class="verdict-line">
        <span class={`verdict ${verdictClass(answer.verdict)}`} data-testid="tpl-verdict">
          {answer.verdict}
        </span>
        <span class="reason">{answer.reason ?? ''}</span>
        <span class="spacer" />
        <span class="muted">{plural(answer.messages.length, 'SMS', 'SMS')}</span>
      </div>
      {answer.messages.map((message, i) => (
        <div class="sms" key={i} data-testid="tpl-sms">
          <pre class="sms-text">{message.text}</pre>
          <div class="sms-meta">
            <span>{message.encoding}</span>
            <span>
              <b data-testid="tpl-characters">{message.characters}</b> characters
            </span>
            <span>
              <b data-testid="tpl-segments">{message.segments}</b> {message.segments === 1 ? 'segment' : 'segments'}
            </span>
            <span>{plural(message.to.length, 'recipient')}</span>
            {message.critical === true ? <span data-testid="tpl-critical">critical: may spend the reserve</span> : null}
            <span>{message.estimatedCost === null ? 'cost unknown' : `≈ ${num(message.estimatedCost)} credits`}</span>
          </div>
          {message.to.length > 0 ? <div class="mono muted to">to {message.to.join(', ')}</div> : null}
        </div>
      ))}
      {answer.dropped.length > 0 ? (
        <div class="block">
          <h3>Dropped recipients</h3>
          <ul class="plain">
            {answer.dropped.map((d, i) => (
              <li key={i}>
                <span class="mono">{d.entry}</span> <span class="muted">— {d.reason}</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {answer.warnings.length > 0 ? (
        <div class="block">
          <h3>Warnings</h3>
          <ul class="warnings">
            {answer.warnings.map((w, i) => (
              <li key={i}>{w}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <div class="block">
        <h3 class="label-line">
          Route as YAML <span class="muted">paste under routes:</span>
          <span class="spacer" />
          <CopyButton text={answer.yaml} target={() => yamlRef.current} testid="tpl-copy" label="Copy YAML" />
        </h3>
        <pre class="code" data-testid="tpl-yaml" ref={yamlRef}>
          {answer.yaml}
        </pre>
      </div>
    </div>
  );
}
