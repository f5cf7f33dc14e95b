import { describe, expect, it } from 'vitest';
import { buildScope, createTemplateEngine } from '../../../../functions/core/templates';

const engine = createTemplateEngine();
const render = (source: string, scope: Readonly<Record<string, unknown>>) =>
  engine.render(engine.compileTemplate(source), scope).text;

describe('buildScope', () => {
  it('puts the body fields at the top level, the whole body under payload', () => {
    const body = { status: 'firing', alerts: [{ labels: { alertname: 'DiskFull' } }] };
    const scope = buildScope({ body, headers: {} });
    expect(scope).toEqual({ ...body, payload: body, headers: {}, query: {} });
    expect(render('{{ status }} {{ payload.alerts[0].labels.alertname }} {{ alerts.size }}', scope)).toBe(
      'firing DiskFull 1',
    );
  });

  it('lower-cases header names and joins repeated values', () => {
    const scope = buildScope({
      body: {},
      headers: { 'X-GitHub-Event': 'push', 'X-Multi': ['a', 'b'], 'x-multi': 'c', 'X-Absent': undefined },
    });
    expect({ ...(scope['headers'] as object) }).toEqual({ 'x-github-event': 'push', 'x-multi': 'a, b, c' });
    expect(render("{{ headers['x-github-event'] }}", scope)).toBe('push');
  });

  it.each([
    ['an array', [{ id: 1 }, { id: 2 }], '{{ payload.size }} {{ payload[1].id }} {{ payload.first.id }}', '2 2 1'],
    ['a string', 'hello', '{{ payload }}', 'hello'],
    ['a number', 42, '{{ payload | plus: 1 }}', '43'],
    ['null', null, '[{{ payload }}]', '[]'],
  ])('keeps a body that is %s under payload only', (_, body, source, expected) => {
    const scope = buildScope({ body, headers: {} });
    expect(Object.keys(scope).sort()).toEqual(['headers', 'payload', 'query']);
    expect(render(source, scope)).toBe(expected);
  });

  it("lets the relay's payload and headers win over body fields of the same name", () => {
    const body = { payload: 'from body', headers: 'from body', other: 1 };
    const scope = buildScope({ body, headers: { 'X-A': '1' } });
    expect(render("{{ payload.payload }}|{{ payload.headers }}|{{ headers['x-a'] }}|{{ other }}", scope)).toBe(
      'from body|from body|1|1',
    );
  });

  it("gives the request's query parameters as query (over a body field of that name), never the token", () => {
    const scope = buildScope({
      body: { query: 'from body' },
      query: { to: '255712345678', token: 'route-secret', __proto__: 'x' } as Record<string, string>,
    });
    expect(render('{{ query.to }}|{{ query.token }}|{{ payload.query }}', scope)).toBe('255712345678||from body');
    expect(Object.getPrototypeOf(scope['query'])).toBeNull();
  });

  it('puts extra over body fields but under payload and headers', () => {
    const scope = buildScope({
      body: { item: 'body', route: 'body' },
      headers: {},
      extra: { item: { sku: 'A-1' }, payload: 'ignored' },
    });
    expect(render('{{ item.sku }} {{ route }} {{ payload.item }}', scope)).toBe('A-1 body body');
  });

  it('keeps a __proto__ key as plain data', () => {
    const body = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const scope = buildScope({ body, headers: { __proto__: 'x' } as unknown as Record<string, string> });
    expect(Object.getPrototypeOf(scope)).toBe(Object.prototype);
    expect((scope as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(render('{{ a }}', scope)).toBe('1');
  });

  it('builds exactly what `{ ...body, ...extra, payload, headers, query }` would: keys, order, descriptors, prototype', () => {
    const symbol = Symbol('s');
    const body = JSON.parse(
      '{"b": 1, "2": "two", "__proto__": {"p": 1}, "constructor": "c", "toString": "t", "payload": "p", "a": [1], "1": "one"}',
    ) as Record<PropertyKey, unknown>;
    Object.defineProperty(body, 'hidden', { value: 'not enumerable', enumerable: false });
    Object.defineProperty(body, 'computed', { get: () => 'from getter', enumerable: true });
    body[symbol] = 'symbol';
    const extra = JSON.parse(
      '{"item": {"sku": "A"}, "b": "extra wins", "__proto__": "extra proto", "valueOf": 3}',
    ) as Record<string, unknown>;
    const headers = { 'X-A': '1' };

    const scope = buildScope({ body, headers, extra });
    const reference: Record<PropertyKey, unknown> = {
      ...body,
      ...extra,
      payload: body,
      headers: scope['headers'],
      query: scope['query'],
    };
    expect(Reflect.ownKeys(scope)).toEqual(Reflect.ownKeys(reference));
    expect(Object.getOwnPropertyDescriptors(scope)).toEqual(Object.getOwnPropertyDescriptors(reference));
    expect(Object.getPrototypeOf(scope)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(scope, '__proto__')?.value).toBe('extra proto');
  });
});
