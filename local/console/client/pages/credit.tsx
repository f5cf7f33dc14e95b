/** Credit: the balance over time, spend per route per day, and the forecast. */
import { useEffect, useMemo, useState } from 'preact/hooks';
import uPlot from 'uplot';
import type { CreditAnswer, Overview } from '../../contract';
import { useApi } from '../data';
import { Chart, PALETTE } from '../chart';
import { timeRange } from '../time-range';
import { num } from '../format';
import { axisTick, formatTime } from '../../../../functions/core/time-format';
import { ErrorBox, Fields, Section } from '../ui';
import { CircuitControl } from '../circuit';
import { creditRequest, DEFAULT_DAYS, MAX_DAYS, shownPeriod } from './credit-request';

const DAYS = [7, DEFAULT_DAYS, 30, MAX_DAYS] as const;

const seconds = (iso: string) => Date.parse(iso) / 1000;

export function CreditPage({ overview }: { overview: Overview }) {
  const [days, setDays] = useState(shownPeriod.days);
  const { data: credit, error: failed, reload } = useApi('GET /credit', creditRequest(days), { keep: true });
  const { data: service, reload: reloadService } = useApi('GET /service', {}, { keep: true });
  const error = failed?.message ?? null;
  useEffect(() => {
    shownPeriod.days = days;
  }, [days]);

  const currency = credit?.currency ?? overview.currency;
  return (
    <div class="page credit">
      <div class="toolbar">
        <label>
          Period
          <select
            value={String(days)}
            onChange={(e) => setDays(Number(e.currentTarget.value))}
            data-testid="credit-days"
          >
            {DAYS.map((d) => (
              <option key={d} value={String(d)}>
                last {d} days
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="small" onClick={reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={error} onRetry={reload} />
      {service ? <CircuitControl status={service} onChanged={reloadService} /> : null}
      {credit ? (
        <>
          <div class="columns credit-top">
            <div class="col wide">
              <Section title="Balance" aside={<span class="muted">{currency}</span>}>
                <BalanceChart credit={credit} />
              </Section>
            </div>
            <div class="col narrow">
              <Section title="Now">
                <div
                  class={`big${credit.balance !== null && credit.threshold !== null && credit.balance < credit.threshold ? ' low' : ''}`}
                  data-testid="credit-now"
                >
                  {num(credit.balance)} <small>{currency}</small>
                </div>
                <div class="muted">
                  {credit.balanceAt ? `as of ${formatTime(credit.balanceAt, { seconds: true })}` : 'never read'}
                </div>
                {credit.parked.count > 0 ? (
                  <p class="low" data-testid="credit-parked">
                    {credit.parked.count}
                    {credit.parked.more ? '+' : ''} SMS parked, waiting for credit
                  </p>
                ) : null}
                <Fields
                  items={[
                    [
                      'Price per SMS',
                      credit.creditsPerUnit === null ? 'unknown' : `${num(credit.creditsPerUnit)} ${currency}`,
                    ],
                    ['Alert threshold', credit.threshold === null ? 'none' : `${num(credit.threshold)} ${currency}`],
                    ['Reserve', credit.reserve === null ? 'none' : `${num(credit.reserve)} ${currency}`],
                  ]}
                />
              </Section>
              <Forecast credit={credit} currency={currency} />
            </div>
          </div>
          <Section title="Spend per route per day" aside={<span class="muted">credits, UTC days</span>}>
            <SpendChart credit={credit} />
            <SpendTable credit={credit} />
          </Section>
        </>
      ) : error ? null : (
        <p class="muted">Loading…</p>
      )}
    </div>
  );
}

function Forecast({ credit, currency }: { credit: CreditAnswer; currency: string }) {
  const f = credit.forecast;
  return (
    <section class="panel" data-testid="forecast">
      <header class="panel-head">
        <h2>Forecast</h2>
      </header>
      <div class="big">
        {f.daysLeft === null ? (
          '—'
        ) : (
          <>
            {num(f.daysLeft, 1)} <small>days left</small>
          </>
        )}
      </div>
      <p class="basis">{f.basis}</p>
      <Fields
        items={[
          ['Spent', `${num(f.spent)} ${currency} in ${span(f.days)}`],
          ['Per day', f.perDay === null ? null : `${num(f.perDay)} ${currency}`],
          ['First observed', f.firstObservedAt ? formatTime(f.firstObservedAt) : null],
        ]}
      />
    </section>
  );
}

/** The time the forecast looked back on, in the unit that reads best: `7 days`, `5 hours`, `12 minutes`, `under a minute`. */
function span(days: number): string {
  if (days >= 1) return `${num(days, 1)} ${days === 1 ? 'day' : 'days'}`;
  const hours = days * 24;
  if (hours >= 1) return `${num(hours, 1)} ${hours === 1 ? 'hour' : 'hours'}`;
  const minutes = Math.round(hours * 60);
  if (minutes < 1) return 'under a minute';
  return `${minutes} ${minutes === 1 ? 'minute' : 'minutes'}`;
}

function BalanceChart({ credit }: { credit: CreditAnswer }) {
  const built = useMemo(() => {
    const points = [...credit.points].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    if (points.length === 0) return null;
    const xs = points.map((p) => seconds(p.at));
    const data: (number | null)[][] = [
      points.map((p) => p.balance),
      points.map((p) => (p.kind === 'read' ? p.balance : null)),
    ];
    const series: uPlot.Series[] = [
      // The console's one time format, not uPlot's `12/4/26 5:04pm`.
      { label: 'Time', value: (_u, v) => (v === null ? '—' : formatTime(new Date(v * 1000), { relative: false })) },
      {
        label: 'Balance',
        stroke: PALETTE[0],
        width: 1.5,
        fill: 'rgba(37,99,235,0.07)',
        points: { show: points.length < 80, size: 4 },
        value: (_u, v) => num(v),
      },
      {
        label: 'Balance read',
        stroke: '#0f766e',
        fill: '#0f766e',
        paths: () => null,
        points: { show: true, size: 7, width: 1.5 },
        value: (_u, v) => num(v),
      },
    ];
    if (credit.threshold !== null) {
      data.push(xs.map(() => credit.threshold));
      series.push({
        label: 'Threshold',
        stroke: '#d97706',
        width: 1.5,
        dash: [6, 4],
        points: { show: false },
        value: (_u, v) => num(v),
      });
    }
    if (credit.reserve !== null) {
      data.push(xs.map(() => credit.reserve));
      series.push({
        label: 'Reserve',
        stroke: '#dc2626',
        width: 1.5,
        dash: [2, 4],
        points: { show: false },
        value: (_u, v) => num(v),
      });
    }
    const options: Omit<uPlot.Options, 'width' | 'height'> = {
      series,
      scales: {
        x: { time: true, range: timeRange(xs) },
        y: { range: (_u, min, max) => [Math.min(0, min), max + Math.max(1, (max - Math.min(0, min)) * 0.08)] },
      },
      axes: [
        {
          stroke: '#555',
          grid: { stroke: '#eee' },
          values: (_u, splits, _axis, _space, step) => splits.map((v) => axisTick(new Date(v * 1000), step)),
        },
        { stroke: '#555', grid: { stroke: '#eee' }, size: 60, values: (_u, splits) => splits.map((v) => num(v, 0)) },
      ],
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
    };
    return { options, data: [xs, ...data] as uPlot.AlignedData };
  }, [credit]);
  if (!built) {
    return (
      <div class="chart-empty" data-testid="balance-chart">
        No balance observed in this period yet: sends and balance reads draw it.
      </div>
    );
  }
  return (
    <Chart options={built.options} data={built.data} height={300} testid="balance-chart" label="Balance over time" />
  );
}

function spendMatrix(credit: CreditAnswer) {
  const days = [...new Set(credit.spend.map((s) => s.day))].sort();
  const routes = [...new Set(credit.spend.map((s) => s.route))].sort();
  const values = routes.map((route) =>
    days.map((day) =>
      credit.spend.filter((s) => s.day === day && s.route === route).reduce((sum, s) => sum + s.credits, 0),
    ),
  );
  return { days, routes, values };
}

function SpendChart({ credit }: { credit: CreditAnswer }) {
  const built = useMemo(() => {
    const { days, routes, values } = spendMatrix(credit);
    if (days.length === 0) return null;
    const xs = days.map((day) => Date.parse(`${day.slice(0, 10)}T00:00:00Z`) / 1000);
    // Stacked: each series is the sum of the routes up to it; the tallest is drawn first.
    const cumulative = routes.map((_, r) =>
      days.map((_d, i) => values.slice(0, r + 1).reduce((sum, row) => sum + (row[i] ?? 0), 0)),
    );
    const order = routes.map((_, r) => r).reverse();
    const bars = uPlot.paths.bars?.({ size: [0.7, 48], align: 0 });
    const series: uPlot.Series[] = [
      { label: 'Day', value: (_u, v) => (v === null ? '' : new Date(v * 1000).toISOString().slice(0, 10)) },
      ...order.map(
        (r): uPlot.Series => ({
          label: routes[r] ?? '',
          stroke: PALETTE[r % PALETTE.length],
          fill: PALETTE[r % PALETTE.length],
          width: 0,
          paths: bars,
          points: { show: false },
          value: (_u, _v, _s, idx) => (idx === null ? '' : num(values[r]?.[idx] ?? 0)),
        }),
      ),
    ];
    const options: Omit<uPlot.Options, 'width' | 'height'> = {
      series,
      scales: {
        x: { time: true, range: (_u, min, max) => [min - 43200, max + 43200] },
        y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] },
      },
      axes: [
        {
          stroke: '#555',
          grid: { show: false },
          // One tick per day with spend, thinned to fit.
          splits: (u) => {
            const step = Math.max(1, Math.ceil((xs.length * 48) / Math.max(1, u.bbox.width / devicePixelRatio)));
            return xs.filter((_x, i) => i % step === 0);
          },
          values: (_u, splits) => splits.map((v) => new Date(v * 1000).toISOString().slice(5, 10)),
        },
        { stroke: '#555', grid: { stroke: '#eee' }, size: 60, values: (_u, splits) => splits.map((v) => num(v, 0)) },
      ],
      cursor: { drag: { x: false, y: false } },
    };
    return { options, data: [xs, ...order.map((r) => cumulative[r] ?? [])] as uPlot.AlignedData };
  }, [credit]);
  if (!built) return <p class="muted">Nothing spent in this period.</p>;
  return (
    <Chart
      options={built.options}
      data={built.data}
      height={200}
      testid="spend-chart"
      label="Spend per route per day"
    />
  );
}

function SpendTable({ credit }: { credit: CreditAnswer }) {
  const { days, routes, values } = useMemo(() => spendMatrix(credit), [credit]);
  if (days.length === 0) return null;
  const newestFirst = days.map((day, i) => ({ day, i })).reverse();
  return (
    <div class="table-wrap">
      <table class="grid spend">
        <thead>
          <tr>
            <th>Day</th>
            {routes.map((route) => (
              <th key={route} class="num">
                {route}
              </th>
            ))}
            <th class="num">Total</th>
          </tr>
        </thead>
        <tbody>
          {newestFirst.map(({ day, i }) => (
            <tr key={day}>
              <td class="time">{day}</td>
              {routes.map((route, r) => (
                <td key={route} class="num">
                  {values[r]?.[i] ? num(values[r]?.[i]) : <span class="muted">·</span>}
                </td>
              ))}
              <td class="num">
                <b>{num(values.reduce((sum, row) => sum + (row[i] ?? 0), 0))}</b>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
