const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const CRON = /^cron\((.+)\)$/;

/**
 * Why EventBridge would reject a schedule expression at deploy time, or `undefined` when it is
 * fine. The config schema accepts any `rate(n unit)` or `cron(…)`; EventBridge is stricter:
 * `rate(1 hour)` but `rate(2 hours)`, and cron takes exactly six fields.
 *
 * @example
 * ```ts
 * scheduleProblem('rate(2 hour)'); // 'use "rate(2 hours)": EventBridge wants the plural unit for values other than 1'
 * ```
 */
export function scheduleProblem(expression: string): string | undefined {
  const rate = RATE.exec(expression);
  if (rate !== null) {
    const value = Number(rate[1]);
    const unit = rate[2] ?? '';
    const singular = unit.replace(/s$/, '');
    if (value === 0) return 'a rate must be at least 1';
    if (value === 1 && unit !== singular) return `use "rate(1 ${singular})": EventBridge wants the singular unit for 1`;
    if (value !== 1 && unit === singular) return `use "rate(${value} ${singular}s)": EventBridge wants the plural unit for values other than 1`;
    return undefined;
  }
  const cron = CRON.exec(expression);
  if (cron !== null) {
    const fields = (cron[1] ?? '').trim().split(/\s+/);
    return fields.length === 6 ? undefined : `a cron expression has six fields (minutes hours day-of-month month day-of-week year), not ${fields.length}`;
  }
  return 'use "rate(n unit)" (single space, lower case) or "cron(…)" with six fields';
}
