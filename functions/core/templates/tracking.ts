import { Context, EchoTag, Output, TypeGuards, evalToken, toValue, toValueSync } from 'liquidjs';
import type { Filter, PropertyAccessToken, Template, Token, Value } from 'liquidjs';

/** A render context that collects the paths `instrumentMissing`'s outputs found missing, in reading order. */
export class TrackingContext extends Context {
  public readonly missing = new Set<string>();
}

const isNil = (value: unknown): boolean => {
  const plain = toValue(value);
  return plain === undefined || plain === null;
};

const asRead = (token: Token | undefined): PropertyAccessToken | undefined =>
  token !== undefined && TypeGuards.isPropertyAccessToken(token) ? token : undefined;

const argumentReads = (filter: Filter): PropertyAccessToken[] => {
  const reads: PropertyAccessToken[] = [];
  for (const argument of filter.args) {
    // Keyword arguments (`allow_false: flag`) are [name, value] pairs.
    const read = asRead(Array.isArray(argument) ? argument[1] : argument);
    if (read) reads.push(read);
  }
  return reads;
};

/**
 * Makes `value` report, into a `TrackingContext`, the reads the missing-variable rule counts
 * (see `RenderResult.missing`). Evaluation is LiquidJS's own `Value.value`, step by step, so the
 * text is identical; reported argument reads are looked up a second time, which is harmless
 * because reading the scope has no side effects.
 */
const trackValue = (value: Value): void => {
  const { initial, filters } = value;
  // With operators (`a == b`, `a or b`) the output is a boolean: its operands are tests.
  const read = initial.postfix.length === 1 ? asRead(initial.postfix[0]) : undefined;
  // A read followed somewhere in the chain by `default` is optional by design.
  let lastDefault = -1;
  filters.forEach((filter, index) => {
    if (filter.name === 'default') lastDefault = index;
  });
  const reads = filters.map(argumentReads);

  value.value = function* trackedValue(ctx: Context, lenient = false): Generator<unknown, unknown, unknown> {
    const missing = ctx instanceof TrackingContext ? ctx.missing : undefined;
    const lenientIf = lenient || (ctx.opts.lenientIf && filters[0]?.name === 'default');
    let current: unknown = yield initial.evaluate(ctx, lenientIf);
    if (missing && read && lastDefault < 0 && isNil(current)) missing.add(read.getText());
    for (const [index, filter] of filters.entries()) {
      const output: unknown = yield filter.render(current, ctx);
      // `default` only returns nil when its fallback was used and was nil itself: then the
      // fallback is what rendered empty. Otherwise (input kept) the fallback wasn't needed.
      const counts = index > lastDefault || (index === lastDefault && isNil(output));
      if (missing && counts) {
        for (const argument of reads[index] ?? []) {
          if (isNil(yield evalToken(argument, ctx))) missing.add(argument.getText());
        }
      }
      current = output;
    }
    return current;
  };
};

/**
 * Rewires, in place, the outputs (`{{ }}` and `{% echo %}`, also inside `{% liquid %}`) of a
 * freshly parsed template so that rendering it with a `TrackingContext` collects missing paths.
 * It is meant for a second parse kept for tracked renders: the tree used for untracked renders
 * stays LiquidJS's own, so those cost exactly what they did.
 *
 * Other tags' expressions (`if`, `unless`, `case`/`when`, `for` collections, `assign`) are left
 * alone: their reads test presence or feed a local name, they don't print.
 */
export const instrumentMissing = (templates: readonly Template[]): void => {
  for (const template of templates) {
    if (template instanceof Output) trackValue(template.value);
    else if (template instanceof EchoTag) {
      // `value` is private in the typings, and absent for a bare `{% echo %}`.
      const echoed = (template as unknown as { readonly value?: Value }).value;
      if (echoed) trackValue(echoed);
    }
    const node: Template = template;
    if (node.children) instrumentMissing(toValueSync(node.children(false, true)));
  }
};
