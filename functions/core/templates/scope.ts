import type { TemplateScope } from './types';

/** Header values as the various Lambda event shapes give them. */
export type ScopeHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface ScopeInput {
  /** The parsed body: integers beyond 2^53 already exact decimal strings. */
  readonly body: unknown;
  readonly headers?: ScopeHeaders;
  /** Variables the relay adds (route name, received time…): they hide body fields of the same name. */
  readonly extra?: Readonly<Record<string, unknown>>;
}

const hasOwn = Object.prototype.hasOwnProperty;
const isEnumerable = Object.prototype.propertyIsEnumerable;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const lowerCaseHeaders = (headers: ScopeHeaders): Record<string, string> => {
  // No prototype: a header named `__proto__` is just a header.
  const lowered = Object.create(null) as Record<string, string>;
  // `for…in` + own check is `Object.entries` (same keys, same order) without its arrays.
  for (const name in headers) {
    if (!hasOwn.call(headers, name)) continue;
    const raw = headers[name];
    if (raw === undefined) continue;
    const key = name.toLowerCase();
    const value = typeof raw === 'string' ? raw : raw.join(', ');
    // `X-Foo` and `x-foo` are one header: keep both values, as HTTP joins repeats.
    lowered[key] = hasOwn.call(lowered, key) ? `${lowered[key]}, ${value}` : value;
  }
  return lowered;
};

/**
 * `{ ...target, ...source }` for the part `source` adds, written into `target` in place: what object
 * spread does (own enumerable keys in their order, then symbols; getters read; each key an own data
 * property), without spread's cost on V8 when properties are added after it — `{ ...body, payload,
 * headers }` takes microseconds a webhook there, the loop a fraction of one.
 */
const copyOwnInto = (target: Record<PropertyKey, unknown>, source: object): void => {
  for (const key in source) {
    if (!hasOwn.call(source, key)) continue;
    setOwn(target, key, (source as Record<string, unknown>)[key]);
  }
  for (const symbol of Object.getOwnPropertySymbols(source)) {
    if (isEnumerable.call(source, symbol)) setOwn(target, symbol, (source as Record<symbol, unknown>)[symbol]);
  }
};

/**
 * Creates or overwrites an own data property, as spread and object literals do. Plain assignment
 * would do the same except for names `Object.prototype` has: `__proto__` would set the prototype,
 * so those are defined instead.
 */
const setOwn = (target: Record<PropertyKey, unknown>, key: PropertyKey, value: unknown): void => {
  if (key in Object.prototype) {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
};

/**
 * Builds the variables a template sees from a webhook.
 *
 * - The body's own fields are top-level variables: `{{ status }}`, `{{ order_number }}`.
 * - `payload` is the whole body, also when it's an array or a scalar: `{{ payload[0].id }}`.
 * - `headers` holds the request headers, names lower-cased: `{{ headers['x-github-event'] }}`.
 * - Precedence, lowest first: body fields, then `extra`, then `payload` and `headers`. A body
 *   field called `payload` or `headers` is hidden at the top level but still reachable as
 *   `payload.payload` / `payload.headers`; so templates can always rely on those two names.
 *
 * Values are not copied or converted: big-integer strings stay strings and print exactly.
 *
 * @example
 * ```ts
 * const scope = buildScope({ body: { status: 'firing' }, headers: { 'X-Grafana-Org': '1' } });
 * // { status: 'firing', payload: { status: 'firing' }, headers: { 'x-grafana-org': '1' } }
 * ```
 */
export const buildScope = ({ body, headers = {}, extra = {} }: ScopeInput): TemplateScope => {
  // Same keys, order and values as `{ ...body, ...extra, payload: body, headers }` (a `__proto__`
  // key in the body stays an own property), built by `copyOwnInto` for speed.
  const scope: Record<PropertyKey, unknown> = {};
  if (isRecord(body)) copyOwnInto(scope, body);
  copyOwnInto(scope, extra);
  scope['payload'] = body;
  scope['headers'] = lowerCaseHeaders(headers);
  return scope;
};
