/**
 * The EventBridge schedule expressions the config accepts (`balance.schedule`, the sweep), read in
 * one place: the config schema accepts what this reads, the stack refuses at synth what
 * EventBridge would refuse at deploy, and the local runtime follows the rate with a timer.
 */

/** `rate(N unit)`, lenient about spaces as the config schema is; EventBridge wants exactly one. */
const RATE = /^rate\(\s*(\d+)\s+(minute|minutes|hour|hours|day|days)\s*\)$/;
const CRON = /^cron\((.+)\)$/;

/** A schedule expression, read. */
export type Schedule =
  | {
      readonly kind: 'rate';
      readonly count: number;
      /** The unit, singular. */
      readonly unit: 'minute' | 'hour' | 'day';
      /** The unit as written: `hours` in `rate(2 hours)`. */
      readonly writtenUnit: string;
      /** Written as EventBridge wants it: `rate(N unit)` with one space and none inside the parentheses. */
      readonly spacedExactly: boolean;
    }
  | {
      readonly kind: 'cron';
      /** The fields between the parentheses, split on white space. */
      readonly fields: readonly string[];
    };

/**
 * Reads `rate(N unit)` or `cron(…)`; `undefined` for anything else.
 *
 * @example
 * ```ts
 * readSchedule('rate(5 minutes)'); // { kind: 'rate', count: 5, unit: 'minute', writtenUnit: 'minutes', spacedExactly: true }
 * readSchedule('cron(0 6 * * ? *)')?.kind; // 'cron'
 * readSchedule('every hour'); // undefined
 * ```
 */
export function readSchedule(expression: string): Schedule | undefined {
  const rate = RATE.exec(expression);
  if (rate !== null) {
    const writtenUnit = rate[2]!;
    return {
      kind: 'rate',
      count: Number(rate[1]),
      unit: writtenUnit.replace(/s$/, '') as 'minute' | 'hour' | 'day',
      writtenUnit,
      spacedExactly: expression === `rate(${rate[1]} ${writtenUnit})`,
    };
  }
  const cron = CRON.exec(expression);
  return cron === null ? undefined : { kind: 'cron', fields: cron[1]!.trim().split(/\s+/) };
}
