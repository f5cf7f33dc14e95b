/** Routes: one card per route with its settings, last webhook, last 24 h by state and its limits. */
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { LimitUse, RouteSummary, RoutesAnswer, State } from '../../contract';
import { errorText, get } from '../api';
import { ago, duration, fullTime, num } from '../format';
import { openActivity } from './activity';
import { CopyButton, ErrorBox, Fields, StateBadge, useInterval } from '../ui';

const STATE_ORDER: readonly State[] = ['PENDING', 'DEFERRED', 'SENDING', 'SENT', 'DIGESTED', 'FAILED', 'UNKNOWN', 'PARKED', 'HELD', 'DROPPED'];

export function RoutesPage() {
  const [routes, setRoutes] = useState<readonly RouteSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      const answer = await get<RoutesAnswer>('routes');
      setRoutes(answer.routes);
      setError(null);
    } catch (e) {
      setError(errorText(e));
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);
  useInterval(load, 10_000, routes !== null);

  return (
    <div class="page routes">
      <ErrorBox error={error} onRetry={() => void load()} />
      {routes === null ? (
        error ? null : <p class="muted">Loading…</p>
      ) : routes.length === 0 ? (
        <p class="empty">No routes in the config.</p>
      ) : (
        <div class="cards">
          {routes.map((route) => (
            <RouteCard key={route.id} route={route} />
          ))}
        </div>
      )}
    </div>
  );
}

function RouteCard({ route }: { route: RouteSummary }) {
  const counts = STATE_ORDER.filter((s) => (route.last24h[s] ?? 0) > 0);
  const total = counts.reduce((sum, s) => sum + (route.last24h[s] ?? 0), 0);
  return (
    <article class="card" data-testid="route-card" data-route={route.id}>
      <header class="card-head">
        <h2>{route.id}</h2>
        <span class="tag">{route.source}</span>
        {route.priority === 'critical' ? <span class="tag critical">critical</span> : null}
        <span class="spacer" />
        <a
          class="small"
          href="#/activity"
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
          ['Quiet hours', <span data-testid="quiet-hours" title={route.quietHours === null ? undefined : route.timeZone}>{route.quietHours ?? 'none'}</span>],
          ['Digest', <span data-testid="digest-window">{route.digestSeconds === null ? 'off: each message on its own' : `one SMS per ${duration(route.digestSeconds)} window`}</span>],
          ['Last webhook', <span title={route.lastWebhookAt ? fullTime(route.lastWebhookAt) : undefined}>{ago(route.lastWebhookAt)}</span>],
        ]}
      />
      <div class="subhead">Last 24 h {total > 0 ? <span class="muted">({num(total)} {total === 1 ? 'record' : 'records'})</span> : null}</div>
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
      {route.limits.length === 0 ? <div class="muted">none</div> : route.limits.map((limit) => <LimitBar key={limit.kind} limit={limit} />)}
    </article>
  );
}

function LimitBar({ limit }: { limit: LimitUse }) {
  const share = limit.max > 0 ? Math.min(1, limit.used / limit.max) : 1;
  const spent = limit.spent !== undefined && limit.max > 0 ? Math.min(1, limit.spent / limit.max) : null;
  const level = share >= 1 ? 'full' : share >= 0.8 ? 'high' : 'ok';
  const label = limit.kind === 'messages' ? 'Messages this window' : 'Credits today';
  return (
    <div class="limit" data-kind={limit.kind}>
      <div class="limit-line">
        <span>{label}</span>
        <span class="mono">
          {num(limit.used)} / {num(limit.max)}
          {limit.spent !== undefined ? <span class="muted"> reserved · {num(limit.spent)} spent</span> : null}
        </span>
      </div>
      <div class={`bar ${level}`} title={`${limit.kind === 'credits' ? 'reserved' : 'used'} ${num(limit.used)} of ${num(limit.max)}; window ends ${fullTime(limit.windowEndsAt)}`}>
        <div class="fill" style={{ width: `${(share * 100).toFixed(1)}%` }} />
        {spent !== null ? <div class="spent" style={{ width: `${(spent * 100).toFixed(1)}%` }} /> : null}
      </div>
      <div class="muted tiny">window ends {fullTime(limit.windowEndsAt)}</div>
    </div>
  );
}
