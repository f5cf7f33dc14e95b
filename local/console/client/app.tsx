/** The console's shell: overview, top navigation and the page of the hash. */
import { useEffect } from 'preact/hooks';
import type { Overview } from '../contract';
import { useApi } from './data';
import { ActivityPage } from './pages/activity';
import { CreditPage } from './pages/credit';
import { RecordPage } from './pages/record';
import { OnCallPage } from './pages/oncall';
import { RoutesPage } from './pages/routes';
import { TemplatesPage } from './pages/templates';
import { useHashPage, type Page } from './route';
import { ErrorBox } from './ui';
import { CircuitControl } from './circuit';

const NAV = [
  ['activity', 'Activity'],
  ['templates', 'Templates'],
  ['credit', 'Credit'],
  ['routes', 'Routes'],
  ['oncall', 'On call'],
] as const;

const TITLES: Record<Page['name'], string> = {
  activity: 'Activity',
  record: 'Record',
  templates: 'Templates',
  credit: 'Credit',
  routes: 'Routes',
  oncall: 'On call',
};

export function App() {
  const page = useHashPage();
  const { data: overview, error: failed, reload } = useApi('GET /overview', {});
  const error = failed === null ? null : `Overview: ${failed.message}`;

  useEffect(() => {
    document.title = `${TITLES[page.name]} · sms-relay console`;
  }, [page.name]);

  const current = page.name === 'record' ? 'activity' : page.name;
  return (
    <div class="shell">
      <header class="top">
        <div class="brand">
          sms-relay <span>console</span>
        </div>
        <nav>
          {NAV.map(([name, label]) => (
            <a
              key={name}
              href={`#/${name}`}
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
        <ErrorBox error={error} onRetry={reload} />
        {overview ? <Current page={page} overview={overview} /> : error ? null : <p class="muted">Loading…</p>}
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
  const since = new Date(data.unreachableSince);
  return (
    <div class="warning" role="status" data-testid="service-unreachable">
      SMS service unreachable since {since.toLocaleString()}
      {data.lastError === null ? '' : ` (${data.lastError})`}: sends are paused, {data.waiting} message
      {data.waiting === 1 ? '' : 's'} waiting (PENDING, no attempts spent). They go out, oldest first, when a probe of
      the balance endpoint succeeds.
      <CircuitControl status={data} onChanged={reload} />
    </div>
  );
}

function Current({ page, overview }: { page: Page; overview: Overview }) {
  switch (page.name) {
    case 'activity':
      return <ActivityPage overview={overview} />;
    case 'record':
      return <RecordPage key={page.id} id={page.id} overview={overview} />;
    case 'templates':
      return <TemplatesPage overview={overview} />;
    case 'credit':
      return <CreditPage overview={overview} />;
    case 'routes':
      return <RoutesPage />;
    case 'oncall':
      return <OnCallPage />;
  }
}
