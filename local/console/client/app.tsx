/** The console's shell: overview, top navigation and the page of the hash, all from the page table (`pages.tsx`). */
import { useEffect } from 'preact/hooks';
import { useApi } from './data';
import { MENU, menuOf, pageOf } from './pages';
import { useHash } from './route';
import { ErrorBox } from './ui';
import { CircuitControl } from './circuit';
import { AttentionBar } from './attention';
import { formatTime } from '../../../functions/core/time-format';

export function App() {
  const page = pageOf(useHash());
  const { data: overview, error: failed, reload } = useApi('GET /overview', {});
  const error = failed === null ? null : `Overview: ${failed.message}`;

  useEffect(() => {
    document.title = `${page.entry.title} · sms-relay console`;
  }, [page.entry.title]);

  const current = menuOf(page.name);
  return (
    <div class="shell">
      <header class="top">
        <div class="brand">
          sms-relay <span>console</span>
        </div>
        <nav>
          {MENU.map(({ name, label, href }) => (
            <a
              key={name}
              href={href}
              class={current === name ? 'active' : undefined}
              data-testid={`nav-${name}`}
              aria-current={current === name ? 'page' : undefined}
            >
              {label}
            </a>
          ))}
        </nav>
        <div class="source" title={overview?.source}>
          {overview ? (
            <>
              <span class="env">{overview.environment}</span> {overview.source}
            </>
          ) : (
            'connecting…'
          )}
        </div>
      </header>
      <main>
        <ServiceBanner />
        <AttentionBar />
        <ErrorBox error={error} onRetry={reload} />
        <h1 class="page-title">{page.entry.title}</h1>
        {overview ? page.entry.render({ overview, params: page.params }) : error ? null : <p class="muted">Loading…</p>}
      </main>
    </div>
  );
}

/** How often the header asks whether the SMS service is reachable. */
const SERVICE_POLL_MS = 5_000;

/** While the SMS service is unreachable: since when, and how many messages wait for it. */
function ServiceBanner() {
  const { data, reload } = useApi('GET /service', {}, { pollMs: SERVICE_POLL_MS, keep: true });
  if (data == null) return null;
  if (data.unreachableSince === null)
    return data.circuit.state === 'closed' ? null : <CircuitControl status={data} onChanged={reload} />;
  return (
    <div class="warning" role="status" data-testid="service-unreachable">
      SMS service unreachable since {formatTime(data.unreachableSince, { seconds: true })}
      {data.lastError === null ? '' : ` (${data.lastError})`}: sends are paused, {data.waiting} message
      {data.waiting === 1 ? '' : 's'} waiting (PENDING, no attempts spent). They go out, oldest first, when a probe of
      the balance endpoint succeeds.
      <CircuitControl status={data} onChanged={reload} />
    </div>
  );
}
