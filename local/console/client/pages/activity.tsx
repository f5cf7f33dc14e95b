/** Activity: the records, newest first, filtered, polled every 2 s and merged in place. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { PAGE_SIZE } from '../../../../functions/core/defaults';
import type { ClientRequest, Overview, RecordRow, State } from '../../contract';
import { api, errorText } from '../api';
import { prefetch, useApi } from '../data';
import { formatTime } from '../../../../functions/core/time-format';
import { num, recipients } from '../format';
import { ACTIVITY_HREF, recordHref } from '../route';
import { ErrorBox, RouteOptions, StateBadge } from '../ui';

const POLL_MS = 2000;

/** A row's time: to the second, no "(3 min ago)" (the list is live; the column stays narrow). */
const FULL = { seconds: true, relative: false } as const;

/** The API reads a duration as that long back from its own clock, at each poll. */
const SINCE = [
  ['15m', 'last 15 min'],
  ['1h', 'last hour'],
  ['24h', 'last 24 h'],
  ['7d', 'last 7 days'],
  ['all', 'all time'],
] as const;
type Since = (typeof SINCE)[number][0];

interface Filters {
  readonly route: string;
  readonly state: State | '';
  readonly since: Since;
}

// Kept across visits to a record and back.
let lastFilters: Filters = { route: '', state: '', since: 'all' };

/** Opens Activity filtered to one route. */
export function openActivity(route: string): void {
  lastFilters = { ...lastFilters, route, state: '' };
  window.location.hash = ACTIVITY_HREF;
}

/** Opens Activity showing one state, on every route (the attention bar's "show them"). */
export function openActivityState(state: State): void {
  lastFilters = { ...lastFilters, route: '', state };
  window.location.hash = ACTIVITY_HREF;
}

function request(filters: Filters, cursor?: string): ClientRequest<'GET /records'> {
  return {
    query: {
      route: filters.route || undefined,
      state: filters.state || undefined,
      since: filters.since === 'all' ? undefined : filters.since,
      limit: PAGE_SIZE.console,
      cursor,
    },
  };
}

/** Asks for the first page the Activity page will show, before it is drawn. */
export function prefetchActivity(): void {
  prefetch('GET /records', request(lastFilters));
}

/** Newest first, by the key the API sorts by: creation with a route filter, else last change. */
function sortRows(rows: RecordRow[], byCreation: boolean): RecordRow[] {
  const key = (row: RecordRow) => (byCreation ? row.createdAt : row.updatedAt);
  return rows.sort((a, b) => (key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** Merges a fresh first page into the loaded rows: updates known rows, adds new ones, keeps the rest. */
function merge(loaded: readonly RecordRow[], fresh: readonly RecordRow[], byCreation: boolean): RecordRow[] {
  const byId = new Map(loaded.map((row) => [row.id, row]));
  for (const row of fresh) byId.set(row.id, row);
  return sortRows([...byId.values()], byCreation);
}

export function ActivityPage({ overview }: { overview: Overview }) {
  const [filters, setFilters] = useState<Filters>(lastFilters);
  const byCreation = filters.route !== '';
  // The first page, read again every 2 s; an answer for filters no longer shown never arrives here.
  const first = useApi('GET /records', request(filters), { pollMs: POLL_MS });
  // Asked for as the console opened (`prefetchActivity`), it is often in at the first render: drawn at once.
  const [rows, setRows] = useState<RecordRow[]>(() =>
    first.data === null ? [] : sortRows([...first.data.records], byCreation),
  );
  const [cursor, setCursor] = useState<string | undefined>(() => first.data?.cursor);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [olderError, setOlderError] = useState<string | null>(null);
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());
  // The filters the rows are for: a first page for others replaces them, one for these is merged in.
  const shownFor = useRef<Filters | null>(first.data === null ? null : filters);
  // The first-page answer the rows already hold (the one drawn at the first render).
  const applied = useRef(first.data);

  useEffect(() => {
    lastFilters = filters;
  }, [filters]);

  useEffect(() => {
    const page = first.data;
    if (page === null || page === applied.current) return;
    applied.current = page;
    if (shownFor.current !== filters) {
      shownFor.current = filters;
      setRows(sortRows([...page.records], byCreation));
      setCursor(page.cursor);
      setFresh(new Set());
      setOlderError(null);
      return;
    }
    const known = new Set(rows.map((row) => row.id));
    const added = page.records.filter((row) => !known.has(row.id)).map((row) => row.id);
    const overlaps = added.length < page.records.length;
    if (!overlaps && rows.length > 0 && page.cursor !== undefined) {
      // A full page with nothing in common may hide a gap: start over from this page.
      setRows(sortRows([...page.records], byCreation));
      setCursor(page.cursor);
    } else {
      if (rows.length === 0) setCursor(page.cursor);
      setRows(merge(rows, page.records, byCreation));
    }
    if (added.length > 0 && rows.length > 0) setFresh(new Set(added));
  }, [first.data]);

  const loaded = shownFor.current === filters || first.error !== null;
  const error = first.error?.message ?? olderError;

  const loadOlder = async () => {
    if (!cursor) return;
    const asked = filters;
    setLoadingOlder(true);
    try {
      const page = await api('GET /records', request(filters, cursor));
      if (asked !== shownFor.current) return;
      setRows((shown) => merge(shown, page.records, byCreation));
      setCursor(page.cursor);
      setOlderError(null);
    } catch (e) {
      if (asked === shownFor.current) setOlderError(errorText(e));
    } finally {
      setLoadingOlder(false);
    }
  };

  const set = (change: Partial<Filters>) => setFilters((f) => ({ ...f, ...change }));
  const filtered = filters.route !== '' || filters.state !== '' || filters.since !== 'all';

  return (
    <div class="page activity">
      <div class="toolbar">
        <label>
          Route
          <select
            data-testid="filter-route"
            value={filters.route}
            onChange={(e) => set({ route: e.currentTarget.value })}
          >
            <option value="">all routes</option>
            <RouteOptions routes={overview.routes} />
          </select>
        </label>
        <label>
          State
          <select
            data-testid="filter-state"
            value={filters.state}
            onChange={(e) => set({ state: e.currentTarget.value as State | '' })}
          >
            <option value="">all states</option>
            {overview.states.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Time
          <select
            data-testid="filter-since"
            value={filters.since}
            onChange={(e) => set({ since: e.currentTarget.value as Since })}
          >
            {SINCE.map(([key, label]) => (
              <option key={key} value={key}>
                {label}
              </option>
            ))}
          </select>
        </label>
        {filtered ? (
          <button type="button" class="link" onClick={() => setFilters({ route: '', state: '', since: 'all' })}>
            clear filters
          </button>
        ) : null}
        <span class="spacer" />
        {/* A screen reader hears the count change as webhooks arrive. */}
        <span class="muted live" title="The first page is read again every 2 seconds" role="status" aria-live="polite">
          <span class="dot" /> live · {rows.length} shown
        </span>
      </div>
      <ErrorBox error={error} />
      <div class="table-wrap">
        <table class="grid records">
          <thead>
            <tr>
              <th>Time</th>
              <th>Route</th>
              <th>State</th>
              <th>To</th>
              <th class="num">Seg.</th>
              <th class="num">Credits</th>
              <th class="wide">Reason</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <Row key={row.id} row={row} isNew={fresh.has(row.id)} byCreation={byCreation} />
            ))}
          </tbody>
        </table>
        {loaded && rows.length === 0 && !error ? (
          <p class="empty">No records{filtered ? ' match these filters' : ' yet'}.</p>
        ) : null}
        {!loaded && rows.length === 0 ? <p class="empty">Loading…</p> : null}
      </div>
      <div class="more">
        {cursor ? (
          <button type="button" onClick={loadOlder} disabled={loadingOlder} data-testid="load-older">
            {loadingOlder ? 'Loading…' : 'Load older'}
          </button>
        ) : rows.length > 0 && loaded ? (
          <span class="muted">That is all.</span>
        ) : null}
      </div>
    </div>
  );
}

function Row({ row, isNew, byCreation }: { row: RecordRow; isNew: boolean; byCreation: boolean }) {
  const href = recordHref(row.id);
  const at = byCreation ? row.createdAt : row.updatedAt;
  return (
    <tr
      data-testid="activity-row"
      data-id={row.id}
      data-state={row.state}
      class={isNew ? 'new' : undefined}
      onClick={(e) => {
        if ((e.target as HTMLElement).closest('a')) return;
        window.location.hash = href;
      }}
    >
      <td
        class="time"
        title={`created ${formatTime(row.createdAt, FULL)}, last change ${formatTime(row.updatedAt, FULL)}`}
      >
        <a href={href}>{formatTime(at, FULL)}</a>
      </td>
      <td>{row.route}</td>
      <td>
        <StateBadge state={row.state} />
      </td>
      <td class="mono" title={row.to.join(', ')}>
        {recipients(row.to)}
      </td>
      <td class="num">{row.segments}</td>
      <td class="num">{num(row.deducted)}</td>
      <td class="reason" title={row.reason ?? undefined}>
        {row.reason ?? ''}
      </td>
    </tr>
  );
}
