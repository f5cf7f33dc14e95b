/**
 * Lambda event filtering (an event source mapping's `FilterCriteria`), for the tests that feed
 * stream records to the sender as the mapping would: a pattern's keys must all be present in the
 * event (an object key descends, an array is the rules for that value, any one of which may match);
 * an event value that is an array matches when one of its elements does.
 *
 * The rules implemented: exact values (string, number, boolean, null), `prefix`, `suffix`,
 * `exists`, `anything-but` (values, or a `prefix`), `numeric`. Any other operator throws, so a
 * template that starts using one fails the test instead of filtering wrongly.
 */
export type FilterPattern = { readonly [key: string]: FilterPattern | readonly FilterRule[] };
export type FilterRule = string | number | boolean | null | { readonly [operator: string]: unknown };

/** A filter the mapping cannot be shown to apply here. */
export class UnsupportedFilterError extends Error {
  public override readonly name = 'UnsupportedFilterError';
}

/**
 * Whether `event` passes `pattern`.
 *
 * @example
 * ```ts
 * matchesPattern({ eventName: ['INSERT'], dynamodb: { NewImage: { state: { S: ['PENDING'] } } } }, record); // true for a new PENDING record
 * ```
 */
export function matchesPattern(pattern: FilterPattern, event: unknown): boolean {
  return Object.entries(pattern).every(([key, rules]) => {
    const present = typeof event === 'object' && event !== null && !Array.isArray(event) && Object.hasOwn(event, key);
    const value = present ? (event as Record<string, unknown>)[key] : undefined;
    if (!Array.isArray(rules)) return present && matchesPattern(rules as FilterPattern, value);
    return (rules as readonly FilterRule[]).some((rule) => matchesRule(rule, present, value));
  });
}

/** Whether `event` passes any of `patterns` (a mapping's filters are ORed); no patterns: every event. */
export const passesFilters = (patterns: readonly FilterPattern[], event: unknown): boolean =>
  patterns.length === 0 || patterns.some((pattern) => matchesPattern(pattern, event));

function matchesRule(rule: FilterRule, present: boolean, value: unknown): boolean {
  if (rule !== null && typeof rule === 'object') {
    const [operator, ...others] = Object.keys(rule);
    if (operator === undefined || others.length > 0)
      throw new UnsupportedFilterError(`a filter rule has one operator, got ${JSON.stringify(rule)}`);
    const argument = rule[operator];
    if (operator === 'exists') return present === argument;
    if (!present) return false;
    return leaves(value).some((leaf) => matchesOperator(operator, argument, leaf));
  }
  return present && leaves(value).some((leaf) => leaf === rule);
}

function matchesOperator(operator: string, argument: unknown, leaf: unknown): boolean {
  switch (operator) {
    case 'prefix':
      return typeof leaf === 'string' && leaf.startsWith(String(argument));
    case 'suffix':
      return typeof leaf === 'string' && leaf.endsWith(String(argument));
    case 'anything-but': {
      if (typeof argument === 'object' && argument !== null && !Array.isArray(argument)) {
        const { prefix } = argument as { prefix?: unknown };
        if (typeof prefix !== 'string')
          throw new UnsupportedFilterError(`anything-but ${JSON.stringify(argument)} is not supported here`);
        return typeof leaf === 'string' && !leaf.startsWith(prefix);
      }
      const excluded: unknown[] = Array.isArray(argument) ? argument : [argument];
      return !excluded.includes(leaf);
    }
    case 'numeric':
      return typeof leaf === 'number' && numericHolds(argument, leaf);
    default:
      throw new UnsupportedFilterError(`the filter operator ${operator} is not implemented by this test helper`);
  }
}

const COMPARE: Readonly<Record<string, (a: number, b: number) => boolean>> = {
  '=': (a, b) => a === b,
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
};

function numericHolds(argument: unknown, leaf: number): boolean {
  if (!Array.isArray(argument) || argument.length % 2 !== 0)
    throw new UnsupportedFilterError(`numeric ${JSON.stringify(argument)}: expected operator, value pairs`);
  for (let at = 0; at < argument.length; at += 2) {
    const compare = COMPARE[argument[at] as string];
    if (compare === undefined || typeof argument[at + 1] !== 'number')
      throw new UnsupportedFilterError(`numeric ${JSON.stringify(argument)}`);
    if (!compare(leaf, argument[at + 1] as number)) return false;
  }
  return true;
}

const leaves = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
