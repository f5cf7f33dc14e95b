import type { TemplateScope } from './types';

/** Header values as the various Lambda event shapes give them. */
export type ScopeHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface ScopeInput {
  /** The parsed body: integers beyond 2^53 already exact decimal strings. */
  readonly body: unknown;
  readonly headers?: ScopeHeaders;
  /** The request's query-string parameters (first value of each): `{{ query.to }}`. */
  readonly query?: Readonly<Record<string, string>>;
  /** Variables the relay adds (route name, received time…): they hide body fields of the same name. */
  readonly extra?: Readonly<Record<string, unknown>>;
}

const hasOwn = Object.prototype.hasOwnProperty;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const lowerCaseHeaders = (headers: ScopeHeaders): Record<string, string> => {
  // No prototype: a header named `__proto__` is just a header.
  const lowered = Object.create(null) as Record<string, string>;
  for (const [name, raw] of Object.entries(headers)) {
    if (raw === undefined) continue;
    const key = name.toLowerCase();
    const value = typeof raw === 'string' ? raw : raw.join(', ');
    // `X-Foo` and `x-foo` are one header: keep both values, as HTTP joins repeats.
    lowered[key] = hasOwn.call(lowered, key) ? `${lowered[key]}, ${value}` : value;
  }
  return lowered;
};

/**
 * Builds the variables a template sees from a webhook.
 *
 * - The body's own fields are top-level variables: `{{ status }}`, `{{ order_number }}`.
 * - `payload` is the whole body, also when it's an array or a scalar: `{{ payload[0].id }}`.
 * - `headers` holds the request headers, names lower-cased: `{{ headers['x-github-event'] }}`.
 * - `query` holds the request's query-string parameters: `{{ query.to }}` for `/hooks/goalert?to=…`
 *   (an on-call tool calls one URL per person); `token`, a route's credential, is left out.
 * - Precedence, lowest first: body fields, then `extra`, then `payload`, `headers` and `query`. A
 *   body field called `payload`, `headers` or `query` is hidden at the top level but still
 *   reachable as `payload.payload` / `payload.headers` / `payload.query`; so templates can always
 *   rely on those three names.
 *
 * Values are not copied or converted: big-integer strings stay strings and print exactly.
 *
 * @example
 * ```ts
 * const scope = buildScope({ body: { status: 'firing' }, headers: { 'X-Grafana-Org': '1' } });
 * // { status: 'firing', payload: { status: 'firing' }, headers: { 'x-grafana-org': '1' } }
 * ```
 */
export const buildScope = ({ body, headers = {}, query = {}, extra = {} }: ScopeInput): TemplateScope => ({
  // Spread defines own data properties, so a `__proto__` key in the body stays plain data.
  ...(isRecord(body) ? body : {}),
  ...extra,
  payload: body,
  headers: lowerCaseHeaders(headers),
  query: queryParameters(query),
});

/** The query without `token`: that is a route's credential (`?token=`), never template data. */
const queryParameters = (query: Readonly<Record<string, string>>): Record<string, string> => {
  // No prototype, as for headers: `?__proto__=` is just a parameter.
  const parameters = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(query)) if (name !== 'token') parameters[name] = value;
  return parameters;
};
