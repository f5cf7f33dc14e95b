import { dynaliteInternals, type ParseContext, type TableDb } from './dynalite-internals';

/**
 * Two things dynalite works out again for every request, kept instead: the parse of an
 * expression, and the table's description.
 *
 * Under a burst the local runtime spent about a fifth of its time in dynalite's expression parsers
 * (PEG grammars, run for every condition and update expression of every request) and more
 * reading the table's description from LevelDB before every write. Both are the
 * same for the same request shape, so a burst drains faster; what dynalite answers does not change.
 */

type Context = ParseContext;

/** A parse kept for reuse: the tree with a marker where each value was, and what it used. */
interface Kept {
  readonly tree: unknown;
  readonly names: readonly string[];
  readonly values: readonly string[];
}

/**
 * Expressions whose parse depends on a value's content and not only its type: `BETWEEN`
 * compares its bounds, `attribute_type` reads its type name. These are parsed every time.
 */
const READS_VALUES = /between|attribute_type/i;
/** Distinct request shapes a process keeps; the relay has a few dozen. */
const KEPT_AT_MOST = 1000;
const VALUE = Symbol('value');

let installed = false;

/**
 * Makes dynalite's three expression parsers (one module each, shared by every dynalite in the
 * process) keep what they parsed, by expression, names, the type of each value and the kind of
 * expression (as JSON: no name map can read as another). A kept parse is used again with this
 * request's values put where the first request's were, and marks used the names and values its
 * expression uses: learnt by parsing it with all of them unused, since dynalite parses a request's
 * update before its condition and the update may have used them already. An expression that
 * failed to parse, or whose parse reads a value's content, is parsed every time. The parser's only
 * effect on the request is marking names and values used, so a kept parse answers as dynalite
 * (test/local/shared/dynalite-differential.test.ts checks it against plain dynalite).
 */
export function keepExpressionParses(): void {
  if (installed) return;
  installed = true;
  for (const parser of dynaliteInternals().parsers) {
    const parse = parser.parse.bind(parser);
    const kept = new Map<string, Kept>();
    parser.parse = (expression, options) => {
      const { context } = options;
      if (READS_VALUES.test(expression)) return parse(expression, options);
      const key = shapeOf(expression, context);
      const found = kept.get(key);
      if (found !== undefined) {
        for (const name of found.names) delete context.unusedAttrNames[name];
        for (const value of found.values) delete context.unusedAttrVals[value];
        return withValues(found.tree, context.attrVals ?? {});
      }
      // What this expression uses, whatever an earlier expression of the request used already:
      // parsed with every name and value unused, the parser deletes each one it meets.
      const unusedNames: Record<string, true> = Object.fromEntries(
        Object.keys(context.attrNames ?? {}).map((name) => [name, true]),
      );
      const unusedValues: Record<string, true> = Object.fromEntries(
        Object.keys(context.attrVals ?? {}).map((value) => [value, true]),
      );
      const tree = parse(expression, {
        ...options,
        context: { ...context, unusedAttrNames: unusedNames, unusedAttrVals: unusedValues },
      });
      const names = Object.keys(context.attrNames ?? {}).filter((name) => !(name in unusedNames));
      const values = Object.keys(context.attrVals ?? {}).filter((value) => !(value in unusedValues));
      for (const name of names) delete context.unusedAttrNames[name];
      for (const value of values) delete context.unusedAttrVals[value];
      if (kept.size < KEPT_AT_MOST) kept.set(key, { tree: withMarkers(tree, context.attrVals ?? {}), names, values });
      return tree;
    };
  }
}

/** The request's shape as JSON, which no name or expression can make read as another's. */
function shapeOf(expression: string, { attrNames = {}, attrVals = {}, isKeyCondition = false }: Context): string {
  return JSON.stringify([
    isKeyCondition,
    expression,
    Object.entries(attrNames),
    Object.entries(attrVals).map(([value, typed]) => [value, Object.keys(typed)]),
  ]);
}

/**
 * A copy of `tree` in which `replace` may stand in for any node. Objects keep their prototype:
 * dynalite's parsers make some with `Object.create(null)` and test them with `in`.
 */
function copyTree(tree: unknown, replace: (node: object) => unknown): unknown {
  const copy = (node: unknown): unknown => {
    if (node === null || typeof node !== 'object') return node;
    const replaced = replace(node);
    if (replaced !== undefined) return replaced;
    if (Array.isArray(node)) return node.map(copy);
    const out = Object.create(Object.getPrototypeOf(node) as object | null) as Record<string, unknown>;
    for (const key of Object.keys(node)) out[key] = copy((node as Record<string, unknown>)[key]);
    return out;
  };
  return copy(tree);
}

/** The tree with a marker naming its placeholder where each of this request's value objects was. */
function withMarkers(tree: unknown, values: Readonly<Record<string, object>>): unknown {
  const placeholders = new Map<object, string>(
    Object.entries(values).map(([placeholder, value]) => [value, placeholder]),
  );
  return copyTree(tree, (node) => {
    const placeholder = placeholders.get(node);
    return placeholder === undefined ? undefined : { [VALUE]: placeholder };
  });
}

/** A kept tree with this request's value objects where the markers are. */
function withValues(tree: unknown, values: Readonly<Record<string, object>>): unknown {
  return copyTree(tree, (node) => {
    const placeholder = (node as { [VALUE]?: string })[VALUE];
    return placeholder === undefined ? undefined : values[placeholder];
  });
}

/**
 * Keeps each table's description in memory once read: dynalite reads it from LevelDB before
 * every request. A put or delete of a description (create, update, delete table) forgets them all
 * when it starts and when it ends. Each read gets its own copy, as from LevelDB, since dynalite
 * changes the one it gets before writing it back.
 */
export function keepTableDescriptions(tableDb: TableDb): void {
  const kept = new Map<string, string>();
  // Counted when a write starts and when it ends: a read that overlapped one is not kept.
  let writes = 0;
  const { get, put, del } = tableDb;
  tableDb.get = (name, cb) => {
    const found = kept.get(name);
    if (found !== undefined) return queueMicrotask(() => cb(null, JSON.parse(found) as object));
    const writesBefore = writes;
    get.call(tableDb, name, (error, table) => {
      if (!error && table !== undefined && writes === writesBefore) kept.set(name, JSON.stringify(table));
      cb(error, table);
    });
  };
  const forget = (): void => {
    writes += 1;
    kept.clear();
  };
  tableDb.put = (name, table, cb) => {
    forget();
    put.call(tableDb, name, table, (error) => {
      forget();
      cb(error);
    });
  };
  tableDb.del = (name, cb) => {
    forget();
    del.call(tableDb, name, (error) => {
      forget();
      cb(error);
    });
  };
}
