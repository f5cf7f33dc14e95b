import {
  Context,
  IfTag,
  Output,
  TokenKind,
  TypeGuards,
  UnlessTag,
  defaultOperators,
  isFalsy,
  isTruthy,
  toValue,
  toValueSync,
} from 'liquidjs';
import type { Filter, Liquid, Operators, PropertyAccessToken, Template, Token, Value } from 'liquidjs';
import type { TemplateScope } from './types';

/**
 * Fast paths for the per-webhook renders: LiquidJS's parsed tree turned, once at compile time,
 * into plain closures.
 *
 * Why: LiquidJS evaluates everything through nested generators driven by `toValueSync`, a fresh
 * `Context` and an emitter; on the relay's short templates that machinery is most of the cost
 * (tens of µs per webhook, against a few for the work itself).
 *
 * How it stays identical: the closures run LiquidJS's *own* parse (same tokens, same operator
 * precedence, same filter objects) and replay, step by step, what its render does for the nodes
 * and values they understand: raw text, `{{ }}` outputs, `if`/`unless`, property reads with
 * `ownPropertyOnly` and the `size`/`first`/`last` specials, filters called exactly as `Filter.render`
 * calls them (same handler, same `this`, a real `Context` built as the engine builds it),
 * LiquidJS's own operators (inlined only for primitives, where they reduce to `===`/`<`/`>`).
 * Everything else is refused at compile time (no fast path: LiquidJS renders). At run time, a
 * property read from something that isn't plain JSON-like data (a `Drop`, a `Date`, a class
 * instance, an object with a `toLiquid`), a property that is a function or an iterator (LiquidJS
 * would call or drive it), or any exception abandons the fast attempt, and the caller renders with
 * LiquidJS, which then produces the text or the error. Reads have no side effects, so an abandoned
 * attempt changes nothing. Values only passed along (a `Drop` printed or compared) go through
 * LiquidJS's own `toValue`, operators and filters, so they need no fallback.
 *
 * Tracked renders (`trackMissing`, preview) never come here: they need LiquidJS's evaluation to
 * see which variables printed empty.
 */

/** A compiled render: the text, or `undefined` when the caller must render with LiquidJS. */
export type FastRender = (scope: TemplateScope) => string | undefined;

/** A compiled condition: its Liquid truthiness, or `undefined` when LiquidJS must evaluate it. */
export type FastCondition = (scope: TemplateScope) => boolean | undefined;

/** Compiles templates and conditions of one LiquidJS instance into fast paths. */
export interface FastCompiler {
  /** `undefined` when the template uses something only LiquidJS renders (loops, `assign`, ranges…). */
  template(templates: readonly Template[]): FastRender | undefined;
  /** `undefined` when the expression uses something only LiquidJS evaluates. */
  condition(value: Value): FastCondition | undefined;
}

/** Thrown inside a fast path to hand the work back to LiquidJS; never escapes this module. */
const BAIL: unique symbol = Symbol('fast path abandoned');

/** The state of one render: what LiquidJS keeps in its `Context`, minus what the subset never touches. */
interface Frame {
  /** The scope as `Context.environments` holds it. */
  readonly environments: object;
  readonly scope: TemplateScope;
  /** The `Context` LiquidJS would have rendered with, built on first need (filters, drops). */
  context: Context | undefined;
}

type Evaluator = (frame: Frame) => unknown;
type Writer = (frame: Frame) => string;

/** Filter internals the typings mark private; `Filter.render` uses exactly these. */
interface FilterInternals {
  readonly handler: (this: unknown, ...args: unknown[]) => unknown;
  readonly token: unknown;
  readonly liquid: Liquid;
}

/** LiquidJS's operator signatures (its `Operators` record holds either kind). */
type UnaryOperatorHandler = (operand: unknown, ctx: Context) => unknown;
type BinaryOperatorHandler = (lhs: unknown, rhs: unknown, ctx: Context) => unknown;

const hasOwn = Object.prototype.hasOwnProperty;
const objectToString = Object.prototype.toString;

/** LiquidJS's `isArray` (not `Array.isArray`: the same test it makes). */
const isLiquidArray = (value: unknown): value is unknown[] => objectToString.call(value) === '[object Array]';

/** LiquidJS's `isIterator`: what its `toValueSync` drives when a generator yields it. */
const isIterator = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { next?: unknown }).next === 'function' &&
  typeof (value as { throw?: unknown }).throw === 'function' &&
  typeof (value as { return?: unknown }).return === 'function';

/**
 * Plain data: what `JSON.parse` produces, plus the null-prototype objects `buildScope` makes. For
 * these, LiquidJS's `toLiquid`/`toValue`/`Drop` branches are all no-ops, so reading them here is
 * exactly what it does; anything else is left to LiquidJS.
 */
const isPlainData = (value: unknown): boolean => {
  const type = typeof value;
  if (type === 'string' || type === 'number' || type === 'boolean' || value === undefined || value === null) return true;
  if (type !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null && prototype !== Array.prototype) return false;
  // LiquidJS calls an own `toLiquid` function before reading.
  return typeof (value as { toLiquid?: unknown }).toLiquid !== 'function';
};

/** A primitive whose LiquidJS comparison is the JavaScript one (no `Comparable`, no `Drop`). */
const isPrimitive = (value: unknown): boolean => {
  const type = typeof value;
  return type === 'string' || type === 'number' || type === 'boolean' || value === undefined || value === null;
};

/** LiquidJS's `stringify`, which its emitter applies to every output. */
const stringify = (value: unknown): string => {
  value = toValue(value);
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (isLiquidArray(value)) return value.map((item) => stringify(item)).join('');
  return String(value);
};

/** LiquidJS's `readArrayElement`. */
const readArrayElement = (array: readonly unknown[], index: number, ownPropertyOnly: boolean): unknown => {
  if (index < 0) index = array.length + index;
  if (ownPropertyOnly && !hasOwn.call(array, index)) return undefined;
  return array[index];
};

/** LiquidJS's `readJSProperty`, for plain data (never a `Drop`). */
const readJSProperty = (obj: unknown, key: unknown, ownPropertyOnly: boolean): unknown => {
  if (ownPropertyOnly && !hasOwn.call(obj, key as PropertyKey)) return undefined;
  return (obj as Record<PropertyKey, unknown>)[key as PropertyKey];
};

/** LiquidJS's `readSize`. */
const readSize = (obj: unknown): unknown => {
  const record = obj as Record<string, unknown>;
  if (hasOwn.call(obj, 'size') || record['size'] !== undefined) return record['size'];
  if (isLiquidArray(obj) || typeof obj === 'string') return obj.length;
  if (typeof obj === 'object') return Object.keys(obj as object).length;
  return undefined;
};

/**
 * Builds the fast-path compiler of `liquid`. Returns a compiler that refuses everything when the
 * instance is configured in a way the fast paths don't replay (strict variables, kept output
 * types, a render time limit, `lenientIf`).
 */
export const createFastCompiler = (liquid: Liquid): FastCompiler => {
  const { options } = liquid;
  const supported =
    !options.strictVariables && !options.keepOutputType && !options.lenientIf && options.renderLimit === Infinity;
  const ownPropertyOnly = options.ownPropertyOnly;
  const jsTruthy = options.jsTruthy;
  const globals: object = options.globals;
  const operators: Operators = options.operators;

  const contextOf = (frame: Frame): Context =>
    (frame.context ??= new Context(frame.scope, options, { sync: true }, { liquid }));

  /** LiquidJS's `isTruthy` (no `Context` needed: it only reads `jsTruthy`). */
  const truthy = (value: unknown): boolean => {
    value = toValue(value);
    return jsTruthy ? Boolean(value) : value !== false && value !== undefined && value !== null;
  };

  /** `Context.readProperty` followed by the `yield` that drives an iterator result, on plain data. */
  const readProperty = (obj: unknown, key: unknown): unknown => {
    if (obj === null || obj === undefined) return obj;
    if (!isPlainData(obj)) throw BAIL;
    key = toValue(key);
    if (isLiquidArray(obj) && typeof key === 'number') return checked(readArrayElement(obj, key, ownPropertyOnly));
    const value = readJSProperty(obj, key, ownPropertyOnly);
    // LiquidJS would call it as a method.
    if (typeof value === 'function') throw BAIL;
    if (key === 'size') return checked(readSize(obj));
    if (key === 'first') return checked(isLiquidArray(obj) ? readArrayElement(obj, 0, ownPropertyOnly) : readJSProperty(obj, 'first', ownPropertyOnly));
    if (key === 'last') return checked(isLiquidArray(obj) ? readArrayElement(obj, -1, ownPropertyOnly) : readJSProperty(obj, 'last', ownPropertyOnly));
    return checked(value);
  };

  /** LiquidJS's `toValueSync` would run an iterator it is handed: leave that to it. */
  const checked = (value: unknown): unknown => {
    if (isIterator(value)) throw BAIL;
    return value;
  };

  /** `evalToken`: the value of one operand or argument token, drops preserved. */
  const compileToken = (token: Token | undefined): Evaluator | undefined => {
    if (token === undefined) return () => undefined;
    if ('content' in token) {
      const content: unknown = (token as { content: unknown }).content;
      return () => content;
    }
    if (TypeGuards.isPropertyAccessToken(token)) return compilePropertyAccess(token);
    // Ranges charge the memory limit and build arrays; grouped expressions are off. Both: LiquidJS.
    if (TypeGuards.isRangeToken(token) || TypeGuards.isFilteredValueToken(token)) return undefined;
    return () => undefined;
  };

  /** `evalPropertyAccessToken` with `Context._get` / `_getFromScope`. */
  const compilePropertyAccess = (token: PropertyAccessToken): Evaluator | undefined => {
    const props: Evaluator[] = [];
    for (const prop of token.props) {
      const evaluate = compileToken(prop);
      if (!evaluate) return undefined;
      // `evalTokenValue`: the key as a value, and a driven iterator (left to LiquidJS).
      props.push((frame) => checked(toValue(evaluate(frame))));
    }
    if (token.variable !== undefined) {
      const variable = compileToken(token.variable);
      if (!variable) return undefined;
      return (frame) => {
        const keys = props.map((prop) => prop(frame));
        let value = variable(frame);
        for (const key of keys) value = readProperty(value, key);
        return value;
      };
    }
    // The usual case, `a.b.c` with literal names: no per-render arrays.
    if (token.props.every((prop) => TypeGuards.isWordToken(prop))) {
      const [head, ...tail] = token.props.map((prop) => (prop as { readonly content: string }).content);
      if (head === undefined) return undefined;
      return (frame) => {
        // `Context.findScope`: its context-level scope is empty (no `assign`/`capture` here), so
        // the scope if it has the name (`in`: inherited names too), else the globals.
        let value = readProperty(head in frame.environments ? frame.environments : globals, head);
        for (const name of tail) value = readProperty(value, name);
        return value;
      };
    }
    const [first, ...rest] = props;
    if (!first) return undefined;
    return (frame) => {
      const head = first(frame);
      const keys = rest.map((prop) => prop(frame));
      let value = readProperty((head as PropertyKey) in frame.environments ? frame.environments : globals, head);
      for (const key of keys) value = readProperty(value, key);
      return value;
    };
  };

  /** One operator of `Expression.evaluate`, applied to evaluated operands. */
  const compileOperator = (name: string, unary: boolean, operands: readonly Evaluator[]): Evaluator | undefined => {
    const operator = operators[name];
    if (!operator) return undefined;
    const isDefault = operator === defaultOperators[name];
    if (unary) {
      const [operand] = operands as [Evaluator];
      if (isDefault && name === 'not') return (frame) => !truthy(operand(frame));
      const apply = operator as UnaryOperatorHandler;
      return (frame) => {
        const value = operand(frame);
        return checked(toValueSync(apply(value, contextOf(frame))));
      };
    }
    const [left, right] = operands as [Evaluator, Evaluator];
    const apply = operator as BinaryOperatorHandler;
    const general = (frame: Frame, l: unknown, r: unknown): unknown => checked(toValueSync(apply(l, r, contextOf(frame))));
    if (!isDefault) return (frame) => general(frame, left(frame), right(frame));
    // Both operands are always evaluated, left first, as LiquidJS does (it has no short circuit).
    switch (name) {
      case 'and':
        return (frame) => {
          const l = left(frame);
          const r = right(frame);
          return truthy(l) && truthy(r);
        };
      case 'or':
        return (frame) => {
          const l = left(frame);
          const r = right(frame);
          return truthy(l) || truthy(r);
        };
      // On primitives `equals` is `===` and the orderings are JavaScript's (`toValue` is the identity).
      case '==':
        return (frame) => {
          const l = left(frame);
          const r = right(frame);
          return isPrimitive(l) && isPrimitive(r) ? l === r : general(frame, l, r);
        };
      case '!=':
        return (frame) => {
          const l = left(frame);
          const r = right(frame);
          return isPrimitive(l) && isPrimitive(r) ? l !== r : general(frame, l, r);
        };
      case '>':
        return (frame) => {
          const l = left(frame);
          const r = right(frame);
          return isPrimitive(l) && isPrimitive(r) ? (l as number) > (r as number) : general(frame, l, r);
        };
      case '<':
        return (frame) => {
          const l = left(frame);
          const r = right(frame);
          return isPrimitive(l) && isPrimitive(r) ? (l as number) < (r as number) : general(frame, l, r);
        };
      case '>=':
        return (frame) => {
          const l = left(frame);
          const r = right(frame);
          return isPrimitive(l) && isPrimitive(r) ? (l as number) >= (r as number) : general(frame, l, r);
        };
      case '<=':
        return (frame) => {
          const l = left(frame);
          const r = right(frame);
          return isPrimitive(l) && isPrimitive(r) ? (l as number) <= (r as number) : general(frame, l, r);
        };
      default:
        return (frame) => general(frame, left(frame), right(frame));
    }
  };

  /** `Expression.evaluate` over its postfix tokens, as a tree of closures. */
  const compileExpression = (postfix: readonly Token[]): Evaluator | undefined => {
    const stack: Evaluator[] = [];
    for (const token of postfix) {
      if (TypeGuards.isOperatorToken(token)) {
        const unary = token.operator === 'not';
        if (stack.length < (unary ? 1 : 2)) return undefined;
        const operands = unary ? [stack.pop()!] : stack.splice(-2, 2);
        const evaluate = compileOperator(token.operator, unary, operands);
        if (!evaluate) return undefined;
        stack.push(evaluate);
      } else {
        const evaluate = compileToken(token);
        if (!evaluate) return undefined;
        stack.push(evaluate);
      }
    }
    // LiquidJS evaluates leftovers of a malformed expression too: leave those to it.
    return stack.length === 1 ? stack[0] : undefined;
  };

  /** `Filter.render`: arguments evaluated in order, then the handler with LiquidJS's `this`. */
  const compileFilter = (filter: Filter): ((frame: Frame, input: unknown) => unknown) | undefined => {
    const { handler, token, liquid: owner } = filter as unknown as FilterInternals;
    const args: ((frame: Frame) => unknown)[] = [];
    for (const argument of filter.args) {
      if (Array.isArray(argument)) {
        // A keyword argument (`allow_false: true`): `[name, value token]`.
        const [name, valueToken] = argument;
        const evaluate = compileToken(valueToken);
        if (!evaluate) return undefined;
        args.push((frame) => [name, evaluate(frame)]);
      } else {
        const evaluate = compileToken(argument as Token);
        if (!evaluate) return undefined;
        args.push(evaluate);
      }
    }
    return (frame, input) => {
      const argv: unknown[] = [input];
      for (const argument of args) argv.push(argument(frame));
      const output = handler.apply({ context: contextOf(frame), token, liquid: owner }, argv);
      // `yield handler(...)`: LiquidJS drives a generator a filter returns.
      return toValueSync(output);
    };
  };

  /** `Value.value`: the expression, then each filter. */
  const compileValue = (value: Value): Evaluator | undefined => {
    const initial = compileExpression(value.initial.postfix);
    if (!initial) return undefined;
    const filters: ((frame: Frame, input: unknown) => unknown)[] = [];
    for (const filter of value.filters) {
      const apply = compileFilter(filter);
      if (!apply) return undefined;
      filters.push(apply);
    }
    if (filters.length === 0) return initial;
    return (frame) => {
      let current = initial(frame);
      for (const apply of filters) current = apply(frame, current);
      return current;
    };
  };

  /** `yield toValue(yield value.value(ctx))`, as outputs and `if` branches evaluate. */
  const settled = (evaluate: Evaluator): Evaluator => (frame) => checked(toValue(evaluate(frame)));

  /**
   * `IfTag.render` / `UnlessTag.render`: the first branch whose test passes, else the `else` part.
   * `if` branches test truthiness; `unless` gives each branch its test (`isFalsy` for the first,
   * `isTruthy` for its `elsif`s).
   */
  const compileBranches = (
    branches: readonly { readonly value: Value; readonly test?: unknown; readonly templates: readonly Template[] }[],
    elseTemplates: readonly Template[] | undefined
  ): Writer | undefined => {
    const compiled: { readonly test: (frame: Frame) => boolean; readonly body: Writer }[] = [];
    for (const branch of branches) {
      const evaluate = compileValue(branch.value);
      const body = compileTemplates(branch.templates);
      if (!evaluate || !body) return undefined;
      const value = settled(evaluate);
      let negate = false;
      if ('test' in branch) {
        if (branch.test === isFalsy) negate = true;
        else if (branch.test !== isTruthy) return undefined;
      }
      compiled.push({ test: negate ? (frame) => !truthy(value(frame)) : (frame) => truthy(value(frame)), body });
    }
    const otherwise = compileTemplates(elseTemplates ?? []);
    if (!otherwise) return undefined;
    return (frame) => {
      for (const { test, body } of compiled) if (test(frame)) return body(frame);
      return otherwise(frame);
    };
  };

  const compileNode = (template: Template): Writer | undefined => {
    if (template instanceof Output) {
      const evaluate = compileValue(template.value);
      if (!evaluate) return undefined;
      const value = settled(evaluate);
      return (frame) => stringify(value(frame));
    }
    if (template instanceof IfTag) return compileBranches(template.branches, template.elseTemplates);
    if (template instanceof UnlessTag) return compileBranches(template.branches, template.elseTemplates);
    if (template.token.kind === TokenKind.HTML) {
      // `HTML.str` is private in the typings; it is the trimmed raw text LiquidJS writes.
      const text: unknown = (template as unknown as { readonly str?: unknown }).str;
      return typeof text === 'string' ? () => text : undefined;
    }
    return undefined;
  };

  const compileTemplates = (templates: readonly Template[]): Writer | undefined => {
    const writers: Writer[] = [];
    for (const template of templates) {
      const writer = compileNode(template);
      if (!writer) return undefined;
      writers.push(writer);
    }
    if (writers.length === 1) return writers[0];
    return (frame) => {
      let text = '';
      for (const writer of writers) text += writer(frame);
      return text;
    };
  };

  const frameOf = (scope: TemplateScope): Frame => ({
    environments: typeof scope === 'object' && scope !== null ? scope : Object(scope),
    scope,
    context: undefined,
  });

  return {
    template(templates) {
      if (!supported) return undefined;
      const write = compileTemplates(templates);
      if (!write) return undefined;
      return (scope) => {
        try {
          return write(frameOf(scope));
        } catch {
          // Includes BAIL: LiquidJS renders instead, and throws whatever it throws.
          return undefined;
        }
      };
    },
    condition(value) {
      if (!supported) return undefined;
      const evaluate = compileValue(value);
      if (!evaluate) return undefined;
      return (scope) => {
        try {
          return truthy(evaluate(frameOf(scope)));
        } catch {
          return undefined;
        }
      };
    },
  };
};
