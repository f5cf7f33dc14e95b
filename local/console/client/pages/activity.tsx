/** Activity: the records, newest first, filtered, polled every 2 s and merged in place. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { PAGE_SIZE } from '../../../../functions/core/defaults';
import type { Overview, RecordRow, RecordsPage, State } from '../../contract';
import { errorText, get, type Query } from '../api';
import { fullTime, num, recipients, shortTime } from '../format';
import { recordHref } from '../route';
import { ErrorBox, RouteOptions, StateBadge, useInterval } from '../ui';

const POLL_MS = 2000;

const SINCE = [
  ['15m', 'last 15 min', 15 * 60_000],
  ['1h', 'last hour', 3600_000],
  ['24h', 'last 24 h', 86400_000],
  ['7d', 'last 7 days', 7 * 86400_000],
  ['all', 'all time', null],
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
  window.location.hash = '#/activity';
}

function query(filters: Filters, extra: Query = {}): Query {
  const window = SINCE.find(([key]) => key === filters.since)?.[2] ?? null;
  return {
    route: filters.route || undefined,
    state: filters.state || undefined,
    since: window === null ? undefined : new Date(Date.now() - window).toISOString(),
    limit: PAGE_SIZE.console,
    ...extra,
  };
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
  const [rows, setRows] = useState<RecordRow[]>([]);
  // The rows as last committed, for merges computed when an answer arrives.
  const rowsRef = useRef<RecordRow[]>([]);
  const commit = useCallback((next: RecordRow[]) => {
    rowsRef.current = next;
    setRows(next);
  }, []);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [loaded, setLoaded] = useState(false);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());
  // Answers for filters no longer shown are ignored.
  const generation = useRef(0);

  const load = useCallback((f: Filters) => {
    const mine = ++generation.current;
    setLoaded(false);
    setError(null);
    get<RecordsPage>('records', query(f)).then(
      (page) => {
        if (mine !== generation.current) return;
        commit(sortRows([...page.records], f.route !== ''));
        setCursor(page.cursor);
        setFresh(new Set());
        setLoaded(true);
      },
      (e: unknown) => {
        if (mine !== generation.current) return;
        setError(errorText(e));
        setLoaded(true);
      },
    );
  }, [commit]);

  useEffect(() => {
    lastFilters = filters;
    load(filters);
  }, [filters, load]);

  useInterval(
    async () => {
      const mine = generation.current;
      try {
        const page = await get<RecordsPage>('records', query(filters));
        if (mine !== generation.current) return;
        setError(null);
        const current = rowsRef.current;
        const known = new Set(current.map((row) => row.id));
        const added = page.records.filter((row) => !known.has(row.id)).map((row) => row.id);
        const overlaps = added.length < page.records.length;
        if (!overlaps && current.length > 0 && page.cursor !== undefined) {
          // A full page with nothing in common may hide a gap: start over from this page.
          commit(sortRows([...page.records], filters.route !== ''));
          setCursor(page.cursor);
        } else {
          if (current.length === 0) setCursor(page.cursor);
          commit(merge(current, page.records, filters.route !== ''));
        }
        if (added.length > 0 && current.length > 0) setFresh(new Set(added));
      } catch (e) {
        if (mine === generation.current) setError(errorText(e));
      }
    },
    POLL_MS,
    loaded,
  );

  const loadOlder = async () => {
    if (!cursor) return;
    const mine = generation.current;
    setLoadingOlder(true);
    try {
      const page = await get<RecordsPage>('records', query(filters, { cursor }));
      if (mine !== generation.current) return;
      commit(merge(rowsRef.current, page.records, filters.route !== ''));
      setCursor(page.cursor);
    } catch (e) {
      if (mine === generation.current) setError(errorText(e));
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
          <select data-testid="filter-route" value={filters.route} onChange={(e) => set({ route: e.currentTarget.value })}>
            <option value="">all routes</option>
            <RouteOptions routes={overview.routes} />
          </select>
        </label>
        <label>
          State
          <select data-testid="filter-state" value={filters.state} onChange={(e) => set({ state: e.currentTarget.value as State | '' })}>
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
          <select data-testid="filter-since" value={filters.since} onChange={(e) => set({ since: e.currentTarget.value as Since })}>
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
        <span class="muted live" title="The first page is read again every 2 seconds">
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
              <Row key={row.id} row={row} isNew={fresh.has(row.id)} byCreation={filters.route !== ''} />
            ))}
          </tbody>
        </table>
        {loaded && rows.length === 0 && !error ? <p class="empty">No records{filtered ? ' match these filters' : ' yet'}.</p> : null}
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
      <td class="time" title={`created ${fullTime(row.createdAt)}, last change ${fullTime(row.updatedAt)}`}>
        <a href={href}>{shortTime(at)}</a>
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
