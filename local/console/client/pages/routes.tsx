/** Routes: one card per route with its settings, last webhook, last 24 h by state and its limits. */
import { useState } from 'preact/hooks';
import type { LimitUse, RouteSummary, State } from '../../contract';
import { api, errorText } from '../api';
import { useApi } from '../data';
import { formatTime } from '../../../../functions/core/time-format';
import { duration, num } from '../format';
import { ACTIVITY_HREF } from '../route';
import { openActivity } from './activity';
import { CopyButton, ErrorBox, Fields, StateBadge } from '../ui';

const STATE_ORDER: readonly State[] = [
  'PENDING',
  'DEFERRED',
  'SENDING',
  'SENT',
  'DIGESTED',
  'FAILED',
  'UNKNOWN',
  'PARKED',
  'HELD',
  'DROPPED',
  'DISMISSED',
];

export function RoutesPage() {
  const { data, error: failed, reload } = useApi('GET /routes', {}, { pollMs: 10_000 });
  const routes = data?.routes ?? null;
  const error = failed?.message ?? null;

  return (
    <div class="page routes">
      <ErrorBox error={error} onRetry={reload} />
      {routes === null ? (
        error ? null : (
          <p class="muted">Loading…</p>
        )
      ) : routes.length === 0 ? (
        <p class="empty">No routes in the config.</p>
      ) : (
        <div class="cards">
          {[...routes]
            .sort((a, b) => Number(waiting(b) > 0) - Number(waiting(a) > 0))
            .map((route) => (
              <RouteCard key={route.id} route={route} onChanged={reload} />
            ))}
        </div>
      )}
    </div>
  );
}

/** SMS of the last 24 hours that wait for a person (parked, held, UNKNOWN): their cards come first, marked. */
function waiting(route: RouteSummary): number {
  return (route.last24h.PARKED ?? 0) + (route.last24h.HELD ?? 0) + (route.last24h.UNKNOWN ?? 0);
}

function RouteCard({ route, onChanged }: { route: RouteSummary; onChanged: () => void }) {
  const counts = STATE_ORDER.filter((s) => (route.last24h[s] ?? 0) > 0);
  const total = counts.reduce((sum, s) => sum + (route.last24h[s] ?? 0), 0);
  const stuck = waiting(route);
  return (
    <article
      class={stuck > 0 ? 'card needs-attention' : 'card'}
      data-testid="route-card"
      data-route={route.id}
      data-waiting={stuck}
    >
      <header class="card-head">
        <h2>{route.id}</h2>
        <span class="tag">{route.source}</span>
        {route.priority === 'critical' ? <span class="tag critical">critical</span> : null}
        {stuck > 0 ? <span class="tag waiting">{stuck} waiting</span> : null}
        <span class="spacer" />
        <a
          class="small"
          href={ACTIVITY_HREF}
          onClick={(e) => {
            e.preventDefault();
            openActivity(route.id);
          }}
        >
          activity →
        </a>
      </header>
      <div class="url-line">
        <code class="mono break">{route.webhookUrl}</code>
        <CopyButton text={route.webhookUrl} testid="copy-url" />
      </div>
      <Fields
        items={[
          ['Priority', route.priority],
          ['Delivery', route.delivery],
          ['Max recipients', route.maxRecipients],
          ['Capture', route.captureSeconds === null ? 'off' : `kept ${duration(route.captureSeconds)}`],
          [
            'Quiet hours',
            <span data-testid="quiet-hours" title={route.quietHours === null ? undefined : route.timeZone}>
              {route.quietHours ?? 'none'}
            </span>,
          ],
          [
            'Digest',
            <span data-testid="digest-window">
              {route.digestSeconds === null
                ? 'off: each message on its own'
                : `one SMS per ${duration(route.digestSeconds)} window`}
            </span>,
          ],
          ['Last webhook', <span>{route.lastWebhookAt === null ? 'never' : formatTime(route.lastWebhookAt)}</span>],
          ...(route.heartbeat === null
            ? []
            : ([
                [
                  'Heartbeat',
                  <span
                    data-testid="heartbeat"
                    title={`expected every ${duration(route.heartbeat.every)}, reported silent after ${duration(route.heartbeat.every + route.heartbeat.grace)}`}
                  >
                    {route.heartbeat.silentSince !== null ? (
                      <span class="warning">silent since {formatTime(route.heartbeat.silentSince)}</span>
                    ) : null}{' '}
                    last seen{' '}
                    <span>
                      {route.heartbeat.lastSeenAt === null ? 'never' : formatTime(route.heartbeat.lastSeenAt)}
                    </span>
                    , every {duration(route.heartbeat.every)}
                  </span>,
                ],
              ] as const)),
        ]}
      />
      <MuteControl route={route} onChanged={onChanged} />
      <div class="subhead">
        Last 24 h{' '}
        {total > 0 ? (
          <span class="muted">
            ({num(total)} {total === 1 ? 'record' : 'records'})
          </span>
        ) : null}
      </div>
      <div class="counts">
        {counts.length === 0 ? (
          <span class="muted">nothing</span>
        ) : (
          counts.map((s) => (
            <span key={s} class="count">
              <StateBadge state={s} /> {num(route.last24h[s] ?? 0)}
            </span>
          ))
        )}
      </div>
      <div class="subhead">Limits</div>
      {route.limits.length === 0 ? (
        <div class="muted">none</div>
      ) : (
        route.limits.map((limit) => <LimitBar key={limit.kind} limit={limit} />)
      )}
    </article>
  );
}

function LimitBar({ limit }: { limit: LimitUse }) {
  const share = limit.max > 0 ? Math.min(1, limit.used / limit.max) : 1;
  const spent = limit.spent !== undefined && limit.max > 0 ? Math.min(1, limit.spent / limit.max) : null;
  const level = share >= 1 ? 'full' : share >= 0.8 ? 'high' : 'ok';
  const label =
    limit.kind === 'messages'
      ? 'Messages this window'
      : limit.kind === 'month'
        ? 'Credits this month'
        : 'Credits today';
  return (
    <div class="limit" data-kind={limit.kind}>
      <div class="limit-line">
        <span>{label}</span>
        <span class="mono">
          {num(limit.used)} / {num(limit.max)}
          {limit.spent !== undefined ? <span class="muted"> reserved · {num(limit.spent)} spent</span> : null}
        </span>
      </div>
      <div
        class={`bar ${level}`}
        title={`${limit.kind === 'messages' ? 'used' : 'reserved'} ${num(limit.used)} of ${num(limit.max)}; window ends ${formatTime(limit.windowEndsAt)}`}
      >
        <div class="fill" style={{ width: `${(share * 100).toFixed(1)}%` }} />
        {spent !== null ? <div class="spent" style={{ width: `${(spent * 100).toFixed(1)}%` }} /> : null}
      </div>
      <div class="muted tiny">window ends {formatTime(limit.windowEndsAt)}</div>
    </div>
  );
}

/** The route's mute: shown while in force, with Unmute; otherwise a Mute button asking for how long and why. */
function MuteControl({ route, onChanged }: { route: RouteSummary; onChanged: () => void }) {
  const [open, setOpen] = useState(false);
  const [length, setLength] = useState('2h');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const send = async (change: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await change();
      setError(null);
      setOpen(false);
      onChanged();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="mute" data-testid="mute">
      {route.mute !== null ? (
        <div class="warning">
          <span data-testid="muted">
            muted until {formatTime(route.mute.until, { in: route.mute.timeZone, relative: false })}
            {route.mute.reason === '' ? '' : `: ${route.mute.reason}`}
          </span>{' '}
          <button
            type="button"
            class="small"
            disabled={busy}
            data-testid="unmute"
            onClick={() => void send(() => api('POST /routes/:id/unmute', { params: { id: route.id } }))}
          >
            Unmute
          </button>
        </div>
      ) : open ? (
        <form
          class="mute-form"
          onSubmit={(e) => {
            e.preventDefault();
            void send(() => api('POST /routes/:id/mute', { params: { id: route.id }, body: { for: length, reason } }));
          }}
        >
          <label>
            for{' '}
            <input
              size={5}
              value={length}
              data-testid="mute-for"
              onInput={(e) => setLength((e.target as HTMLInputElement).value)}
            />
          </label>{' '}
          <label>
            reason{' '}
            <input
              value={reason}
              maxLength={200}
              data-testid="mute-reason"
              onInput={(e) => setReason((e.target as HTMLInputElement).value)}
            />
          </label>{' '}
          <button class="small primary" type="submit" disabled={busy} data-testid="mute-confirm">
            Mute
          </button>{' '}
          <button class="small link" type="button" onClick={() => setOpen(false)}>
            cancel
          </button>
        </form>
      ) : (
        <button
          type="button"
          class="small"
          data-testid="mute-open"
          title="Record this route's messages DROPPED for a while (a maintenance window)"
          onClick={() => setOpen(true)}
        >
          Mute…
        </button>
      )}
      {error !== null ? <div class="warning">{error}</div> : null}
    </div>
  );
}
