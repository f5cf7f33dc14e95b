import { readSchedule } from '../functions/core/schedule';

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
  const schedule = readSchedule(expression);
  if (schedule?.kind === 'rate' && schedule.spacedExactly) {
    const { count: value, unit: singular, writtenUnit: unit } = schedule;
    if (value === 0) return 'a rate must be at least 1';
    if (value === 1 && unit !== singular) return `use "rate(1 ${singular})": EventBridge wants the singular unit for 1`;
    if (value !== 1 && unit === singular)
      return `use "rate(${value} ${singular}s)": EventBridge wants the plural unit for values other than 1`;
    return undefined;
  }
  if (schedule?.kind === 'cron') {
    const { fields } = schedule;
    return fields.length === 6
      ? undefined
      : `a cron expression has six fields (minutes hours day-of-month month day-of-week year), not ${fields.length}`;
  }
  return 'use "rate(n unit)" (single space, lower case) or "cron(…)" with six fields';
}
