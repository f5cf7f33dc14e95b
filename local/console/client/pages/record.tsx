/** One record: its row, the SMS, its history, the service's answer, errors, the webhook; redrive, dismiss. */
import { useState } from 'preact/hooks';
import type { Overview, RecordDetail, State } from '../../contract';
import { api, errorText } from '../api';
import { useApi } from '../data';
import { num, plural, prettyJson } from '../format';
import { formatTime } from '../../../../functions/core/time-format';
import { ACTIVITY_HREF, recordHref } from '../route';
import { ErrorBox, Fields, Section, StateBadge } from '../ui';

const POLL_MS = 2000;

const inFlight = (state: State): boolean => state === 'PENDING' || state === 'SENDING';

export function RecordPage({ id, overview }: { id: string; overview: Overview }) {
  // Polled while the record is on its way: until it leaves PENDING or SENDING.
  const {
    data: detail,
    error: failed,
    reload,
  } = useApi(
    'GET /records/:id',
    { params: { id } },
    { pollMs: POLL_MS, pollWhile: ({ record }) => inFlight(record.state) },
  );
  const [redriving, setRedriving] = useState(false);
  const [redriveNote, setRedriveNote] = useState<string | null>(null);
  const [redriveError, setRedriveError] = useState<string | null>(null);
  // An UNKNOWN record may already have arrived: its Redrive asks first, in words.
  const [confirming, setConfirming] = useState(false);
  // Dismiss asks for the reason first; the record keeps it with who and when.
  const [dismissing, setDismissing] = useState(false);
  const [dismissReason, setDismissReason] = useState('');
  const [dismissBusy, setDismissBusy] = useState(false);
  const notFound = failed?.status === 404;
  const error = redriveError ?? failed?.message ?? null;

  const dismiss = async () => {
    setDismissBusy(true);
    setRedriveNote(null);
    setRedriveError(null);
    try {
      const answer = await api('POST /records/:id/dismiss', { params: { id }, body: { reason: dismissReason } });
      setDismissing(false);
      setDismissReason('');
      setRedriveNote(`Dismissed${answer.record ? `: now ${answer.record.state}, never sent` : ''}.`);
      reload();
    } catch (e) {
      setRedriveError(`Dismiss: ${errorText(e)}`);
    } finally {
      setDismissBusy(false);
    }
  };

  const redrive = async (acceptDuplicates: boolean) => {
    setConfirming(false);
    setRedriving(true);
    setRedriveNote(null);
    setRedriveError(null);
    try {
      const answer = await api('POST /records/:id/redrive', { params: { id }, body: { acceptDuplicates } });
      setRedriveNote(
        answer.requeued
          ? `Re-queued${answer.record ? `: now ${answer.record.state}` : ''}.`
          : `Not re-queued${answer.record ? `: the record is ${answer.record.state}` : ''}.`,
      );
      reload();
    } catch (e) {
      setRedriveError(`Redrive: ${errorText(e)}`);
    } finally {
      setRedriving(false);
    }
  };

  if (!detail) {
    return (
      <div class="page record">
        <p>
          <a href={ACTIVITY_HREF}>← Activity</a>
        </p>
        <ErrorBox error={error} onRetry={reload} />
        {notFound ? (
          <p class="empty">No record {id}: it may have expired.</p>
        ) : error ? null : (
          <p class="muted">Loading…</p>
        )}
      </div>
    );
  }

  const { record, sms, history, historyOmitted, result, errors, capture } = detail;
  // Where the history's left-out changes were: after its first entries.
  const gap = historyOmitted?.after ?? history.length;
  return (
    <div class="page record" data-testid="record-detail" data-id={record.id}>
      <div class="record-head">
        <a href={ACTIVITY_HREF}>← Activity</a>
        <h1>
          <span class="mono">{record.id}</span>
        </h1>
        <StateBadge state={record.state} testid="record-state" />
        {detail && inFlight(detail.record.state) ? (
          <span class="muted live">
            <span class="dot" /> updating
          </span>
        ) : null}
        <span class="spacer" />
        {detail.redrivable ? (
          <button
            type="button"
            class="primary"
            data-testid="redrive"
            disabled={redriving || confirming}
            onClick={() => (detail.redriveWarning === null ? void redrive(false) : setConfirming(true))}
            title={`Re-queue this ${record.state} record; the relay sends it at once`}
          >
            {redriving ? 'Redriving…' : 'Redrive'}
          </button>
        ) : null}
        {detail.dismissible ? (
          <button
            type="button"
            data-testid="dismiss"
            disabled={dismissing || dismissBusy || redriving}
            onClick={() => setDismissing(true)}
            title={`End this ${record.state} record without sending it; the alarm counting ${record.state} records stops counting it`}
          >
            Dismiss
          </button>
        ) : null}
      </div>
      {dismissing ? (
        <form
          class="warning"
          aria-label="Dismiss without sending"
          data-testid="dismiss-form"
          onSubmit={(event) => {
            event.preventDefault();
            void dismiss();
          }}
        >
          <p>
            Dismiss this {record.state} record: it is never sent, and no longer counted by the alarm on {record.state}{' '}
            records. The record keeps who dismissed it, when and why.
          </p>
          <label>
            Why{' '}
            <input
              type="text"
              data-testid="dismiss-reason"
              required
              maxLength={500}
              value={dismissReason}
              placeholder="e.g. customer number disconnected"
              onInput={(event) => setDismissReason((event.target as HTMLInputElement).value)}
            />
          </label>{' '}
          <button
            type="submit"
            class="primary"
            data-testid="dismiss-confirm"
            disabled={dismissBusy || dismissReason.trim() === ''}
          >
            {dismissBusy ? 'Dismissing…' : 'Dismiss without sending'}
          </button>{' '}
          <button type="button" data-testid="dismiss-cancel" onClick={() => setDismissing(false)}>
            Cancel
          </button>
        </form>
      ) : null}
      {confirming && detail.redriveWarning !== null ? (
        <div class="warning" role="alertdialog" aria-label="Send again?" data-testid="redrive-confirm">
          <p>{detail.redriveWarning}</p>
          <p>
            Check the SMS service's dashboard first if you can. Send it again, accepting that the recipient may get it
            twice?
          </p>
          <button
            type="button"
            class="primary"
            data-testid="redrive-accept-duplicates"
            onClick={() => void redrive(true)}
          >
            Send again, accepting a duplicate
          </button>{' '}
          <button type="button" data-testid="redrive-cancel" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      ) : null}
      {redriveNote ? (
        <div class="note" role="status">
          {redriveNote}
        </div>
      ) : null}
      <ErrorBox error={error} />
      {/* On a paging record the incident is what the reader came for: first, full width. */}
      <IncidentStory incident={detail.incident} />
      <div class="columns">
        <div class="col">
          <Section title="Record">
            <Fields
              items={[
                ['Route', record.route],
                ['State', <StateBadge state={record.state} />],
                ['Reason', record.reason],
                [
                  'Provider',
                  record.provider === null ? null : <span data-testid="record-provider">{record.provider}</span>,
                ],
                ...(record.failoverFrom === null
                  ? []
                  : ([
                      [
                        'Failover',
                        <span data-testid="record-failover">
                          from {record.failoverFrom}
                          {record.failoverReason === null ? '' : `: ${record.failoverReason}`}
                        </span>,
                      ],
                    ] as const)),
                ...(record.dismissal === null
                  ? []
                  : ([
                      [
                        'Dismissed',
                        <span data-testid="record-dismissal">
                          by {record.dismissal.by},{' '}
                          {formatTime(record.dismissal.at, { seconds: true, relative: false })}:{' '}
                          {record.dismissal.reason} (was {record.dismissal.from})
                        </span>,
                      ],
                    ] as const)),
                ['Created', formatTime(record.createdAt, { seconds: true, relative: false })],
                ['Last change', formatTime(record.updatedAt, { seconds: true, relative: false })],
                ['To', <span class="mono">{record.to.join(', ') || '—'}</span>],
                ['Segments', record.segments],
                ['Attempts', record.attempts],
                ['Deducted', record.deducted === null ? null : `${num(record.deducted)} ${overview.currency}`],
                [
                  'Balance after',
                  record.remainingBalance === null ? null : `${num(record.remainingBalance)} ${overview.currency}`,
                ],
              ]}
            />
          </Section>
          <Section title="SMS">
            <pre class="sms-text" data-testid="record-text">
              {sms.text}
            </pre>
            {sms.notice ? <p class="warning">{sms.notice}</p> : null}
            <Fields
              items={[
                ['Encoding', sms.encoding],
                ['Characters', sms.characters],
                ['Segments', sms.segments],
                ['Part', sms.parts > 1 ? `${sms.part} of ${sms.parts}` : '1 of 1'],
                ['Index', sms.index],
                ['Sender ID', sms.senderId ?? 'service default'],
                ['Delivery', sms.delivery],
              ]}
            />
          </Section>
          <Section title="Service's answer">
            {result ? (
              <Fields
                items={[
                  ['Deducted', `${num(result.deducted)} ${overview.currency}`],
                  ['Remaining balance', `${num(result.remainingBalance)} ${overview.currency}`],
                  ['Message', result.message],
                  ['Sender ID', result.senderId],
                  ['Sent at', result.sentAt ? formatTime(result.sentAt, { seconds: true, relative: false }) : null],
                ]}
              />
            ) : (
              <p class="muted">No answer: the service has not accepted this SMS.</p>
            )}
          </Section>
        </div>
        <div class="col">
          <Section title="History">
            <ol class="timeline">
              {history.slice(0, gap).map((change, i) => (
                <HistoryEntry key={i} change={change} />
              ))}
              {historyOmitted ? (
                <li class="omitted muted" data-testid="history-omitted">
                  {plural(historyOmitted.count, 'state change')} left out
                </li>
              ) : null}
              {history.slice(gap).map((change, i) => (
                <HistoryEntry key={gap + i} change={change} />
              ))}
            </ol>
            {history.length === 0 ? <p class="muted">No state changes recorded.</p> : null}
          </Section>
          {errors.length > 0 ? (
            <Section title={`Failed attempts (${errors.length})`}>
              <table class="grid attempts">
                <thead>
                  <tr>
                    <th>Time</th>
                    <th>Provider</th>
                    <th>Error</th>
                    <th>Status</th>
                    <th>Delivery</th>
                    <th class="wide">Message</th>
                  </tr>
                </thead>
                <tbody>
                  {errors.map((err, i) => (
                    <tr key={i}>
                      <td class="time">{formatTime(err.at, { seconds: true, relative: false })}</td>
                      <td>{err.provider ?? ''}</td>
                      <td class="mono">{err.name}</td>
                      <td>{err.status ?? ''}</td>
                      <td>{err.delivery ?? ''}</td>
                      <td class="break">{err.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Section>
          ) : null}
          <Digest digest={detail.digest} />
          <Captured capture={capture} />
        </div>
      </div>
    </div>
  );
}

/** The incident the SMS belongs to: its state and its story (sent to, escalated to, acknowledged by), on the route's clock. */
function IncidentStory({ incident }: { incident: RecordDetail['incident'] }) {
  if (incident === null) return null;
  const closed = incident.closedAt === null ? '' : ` · closed ${formatTime(incident.closedAt)}`;
  return (
    <Section
      title="Incident"
      aside={
        <span class="muted">
          {incident.state.toLowerCase()} · level {incident.level}
          {closed}
        </span>
      }
    >
      <div class="muted small-gap">
        <span class="mono chip" data-testid="incident-id">
          {incident.id}
        </span>{' '}
        route {incident.route}, opened {formatTime(incident.openedAt)}
        {incident.nextDueAt === null ? '' : `, next step ${formatTime(incident.nextDueAt)}`}
      </div>
      <ol class="history" data-testid="incident-story">
        {incident.story.map((entry, i) => (
          <li key={i} data-testid="story-entry" data-event={entry.event}>
            <span class="time" title={`${incident.timeZone}: ${entry.atLocal}`}>
              {formatTime(entry.at, { relative: false })}
            </span>{' '}
            <span class="reason">{entry.line}</span>
            {entry.states.map((state, n) => (
              <span key={n}>
                {' '}
                <StateBadge state={state} testid="story-state" />
              </span>
            ))}
          </li>
        ))}
      </ol>
    </Section>
  );
}

/** A DIGESTED record's digest, or a digest's DEFERRED records. */
function Digest({ digest }: { digest: RecordDetail['digest'] }) {
  if (digest === null) return null;
  return (
    <Section title="Digest">
      <div class="muted small-gap" data-testid="digest-links">
        {digest.id !== null ? (
          <>
            Sent inside digest{' '}
            <a class="mono chip" href={recordHref(digest.id)}>
              {digest.id}
            </a>
          </>
        ) : (
          <>
            Stands for {plural(digest.of.length, 'deferred record')}, oldest first:
            {digest.of.map((rid) => (
              <a key={rid} class="mono chip" href={recordHref(rid)}>
                {rid}
              </a>
            ))}
          </>
        )}
      </div>
    </Section>
  );
}

function Captured({ capture }: { capture: RecordDetail['capture'] }) {
  if (!capture) {
    return (
      <Section title="Webhook">
        <p class="muted">
          Not captured (the route has no <code>capture</code>, or the capture has expired).
        </p>
      </Section>
    );
  }
  const headers = Object.entries(capture.headers).sort(([a], [b]) => a.localeCompare(b));
  const pretty = capture.bodyEncoding === 'utf8' ? prettyJson(capture.body) : null;
  return (
    <Section
      title="Webhook"
      aside={<span class="muted">received {formatTime(capture.receivedAt, { seconds: true, relative: false })}</span>}
    >
      <table class="grid kv">
        <tbody>
          {headers.map(([name, value]) => (
            <tr key={name}>
              <th class="mono">{name}</th>
              <td class="mono break">{value}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="muted small-gap">
        Body ({capture.bodyEncoding === 'base64' ? 'base64, not text' : pretty ? 'JSON' : 'text'}) ·{' '}
        {plural(capture.recordIds.length, 'record')} from this webhook
        {capture.recordIds.length > 1
          ? capture.recordIds.map((rid) => (
              <a key={rid} class="mono chip" href={recordHref(rid)}>
                {rid}
              </a>
            ))
          : null}
      </div>
      <pre class="code">{pretty ?? capture.body}</pre>
    </Section>
  );
}

function HistoryEntry({ change }: { change: RecordDetail['history'][number] }) {
  return (
    <li data-testid="history-entry" data-state={change.state}>
      <span class="time">{formatTime(change.at, { seconds: true, relative: false })}</span>
      <StateBadge state={change.state} />
      <span class="reason">
        {change.provider === undefined ? '' : `via ${change.provider}${change.reason === undefined ? '' : ': '}`}
        {change.reason ?? ''}
      </span>
    </li>
  );
}
