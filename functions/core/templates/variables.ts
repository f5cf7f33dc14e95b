import type { Context, Liquid, Template } from 'liquidjs';

/** A scope path the template reads, as far as it can be looked up without rendering. */
export interface VariableCheck {
  /** As written in the template: `customer.name`, `items[i].sku`. */
  readonly path: string;
  /** Static segments up to the first dynamic index: `items[i].sku` → `['items']`. */
  readonly segments: readonly (string | number)[];
}

/**
 * The global variables of a parsed template (not loop variables or `assign`s), found once at
 * compile time with LiquidJS's static analysis.
 *
 * A dynamic index (`items[i].sku`) can't be resolved without rendering, so only its static
 * prefix (`items`) is checked; the index variable (`i`) is checked on its own.
 */
export const analyzeVariables = (liquid: Liquid, templates: Template[]): readonly VariableCheck[] => {
  const analysis = liquid.analyzeSync(templates, { partials: false });
  const checks = new Map<string, VariableCheck>();
  for (const variables of Object.values(analysis.globals)) {
    for (const variable of variables) {
      const path = variable.toString();
      if (checks.has(path)) continue;
      const segments: (string | number)[] = [];
      for (const segment of variable.segments) {
        if (typeof segment !== 'string' && typeof segment !== 'number') break;
        segments.push(segment);
      }
      if (segments.length > 0) checks.set(path, { path, segments });
    }
  }
  return [...checks.values()];
};

/** The paths that are `undefined` or `null` in `context`, looked up as Liquid would (`size`, `first`…). */
export const findMissing = (checks: readonly VariableCheck[], context: Context): string[] => {
  const missing: string[] = [];
  for (const { path, segments } of checks) {
    const value = context.getSync(segments as (string | number)[]);
    if (value === undefined || value === null) missing.push(path);
  }
  return missing;
};
