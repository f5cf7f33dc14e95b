import { describe, expect, it } from 'vitest';
import { buildScope, createTemplateEngine, TemplateError } from '../../../../functions/core/templates';

const engine = createTemplateEngine();

const compileError = (compile: () => unknown): TemplateError => {
  try {
    compile();
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return error as TemplateError;
  }
  throw new Error('expected a TemplateError');
};

const render = (source: string, scope: Record<string, unknown> = {}) =>
  engine.render(engine.compileTemplate(source), scope);

describe('createTemplateEngine', () => {
  it('applies the Tanzanian defaults', () => {
    expect(engine.options).toEqual({ timeZone: 'Africa/Dar_es_Salaam', currency: 'TZS', locale: 'en' });
  });

  it('returns one engine per options set', () => {
    expect(createTemplateEngine({})).toBe(engine);
    expect(createTemplateEngine({ timeZone: 'Africa/Dar_es_Salaam', currency: 'tzs' })).toBe(engine);
    expect(createTemplateEngine({ currency: 'USD' })).not.toBe(engine);
  });

  it.each([
    [{ timeZone: 'Mars/Olympus_Mons' }, 'unknown time zone "Mars/Olympus_Mons"'],
    [{ currency: 'TZ' }, 'invalid currency "TZ"'],
    [{ locale: 'not a locale!' }, 'invalid locale "not a locale!"'],
  ])('rejects bad options %j', (options, message) => {
    expect(compileError(() => createTemplateEngine(options)).message).toBe(message);
  });
});

describe('compileTemplate', () => {
  it('reports an unknown filter by name, keeping the LiquidJS error as cause', () => {
    const error = compileError(() => engine.compileTemplate('Total: {{ total | monie }}'));
    expect(error.message).toBe('unknown filter "monie"');
    expect(error.cause).toBeInstanceOf(Error);
    expect(error).toMatchObject({ line: 1, column: 8 });
  });

  it('locates an unknown filter on later lines', () => {
    expect(compileError(() => engine.compileTemplate('Hi\n{{ name | upcase | nope }}'))).toMatchObject({
      message: 'unknown filter "nope"',
      line: 2,
    });
  });

  it.each([
    ['Hi {{ name ', 'output "{{ name " not closed (line 1, col 4)'],
    ['{% if paid %}yes', 'tag {% if paid %} not closed (line 1, col 1)'],
    ['{% frobnicate %}', 'unknown tag "frobnicate"'],
  ])('reports syntax error in %j', (source, message) => {
    expect(compileError(() => engine.compileTemplate(source)).message).toBe(message);
  });

  it.each(['include', 'render', 'layout'])('refuses the file tag %s', (tag) => {
    expect(compileError(() => engine.compileTemplate(`{% ${tag} 'other' %}`)).message).toMatch(
      `the "${tag}" tag is not available`
    );
  });

  it('lists the scope variables the template reads, without loop variables or assigns', () => {
    const template = engine.compileTemplate(
      "{{ customer.name }} {% for line in line_items %}{{ line.sku }}{% endfor %}{% assign n = order_number %}{{ n }} {{ headers['x-shopify-topic'] }}"
    );
    expect(template.variables).toEqual(['customer.name', 'line_items', 'order_number', 'headers.x-shopify-topic']);
    expect(template.source).toContain('customer.name');
  });

  it('refuses to render a template compiled by another engine', () => {
    const other = createTemplateEngine({ timeZone: 'UTC' });
    const template = other.compileTemplate('{{ a }}');
    expect(compileError(() => engine.render(template, {})).message).toBe('template was compiled by another engine');
  });
});

describe('render', () => {
  it('renders missing variables empty and reports them', () => {
    const result = render('Order {{ order_number }} for {{ customer.first_name }} {{ customer.last_name }}!', {
      order_number: 1001,
      customer: { first_name: 'Asha', last_name: null },
    });
    expect(result).toEqual({ text: 'Order 1001 for Asha !', missing: ['customer.last_name'] });
  });

  it('reports a missing object once per path read through it', () => {
    expect(render('{{ customer.name }} {{ customer.phone }} {{ customer.name }}').missing).toEqual([
      'customer.name',
      'customer.phone',
    ]);
  });

  it('resolves Liquid properties like size and first before calling a path missing', () => {
    const result = render('{{ items.size }} {{ items.first.sku }} {{ items[0].sku }} {{ items[5].sku }}', {
      items: [{ sku: 'A-1' }],
    });
    expect(result).toEqual({ text: '1 A-1 A-1 ', missing: ['items[5].sku'] });
  });

  it('checks only the static prefix of a dynamic index (documented approximation)', () => {
    expect(render('{{ items[i].sku }}', { items: [{ sku: 'A' }], i: 0 })).toEqual({ text: 'A', missing: [] });
    expect(render('{{ items[i].sku }}', { items: [{ sku: 'A' }], i: 3 }).missing).toEqual([]);
    expect(render('{{ items[i].sku }}', { i: 0 }).missing).toEqual(['items[i].sku']);
  });

  it('still lists a variable guarded by default (it was absent)', () => {
    expect(render("{{ note | default: 'none' }}")).toEqual({ text: 'none', missing: ['note'] });
  });

  it('prints big-integer strings exactly', () => {
    const scope = buildScope({ body: { id: '820982911946154508', order: { id: '9007199254740993' } } });
    expect(engine.render(engine.compileTemplate('{{ id }} {{ order.id }} {{ payload.id }}'), scope).text).toBe(
      '820982911946154508 9007199254740993 820982911946154508'
    );
  });

  it('does not expose prototype properties', () => {
    expect(render('{{ payload.constructor }}{{ payload.hasOwnProperty }}', { payload: {} }).text).toBe('');
  });

  it('makes the built-in date filter use the engine time zone', () => {
    expect(render("{{ '2026-03-01T10:00:00Z' | date: '%Y-%m-%d %H:%M' }}").text).toBe('2026-03-01 13:00');
    const utc = createTemplateEngine({ timeZone: 'UTC' });
    expect(utc.render(utc.compileTemplate("{{ '2026-03-01T10:00:00Z' | date: '%H:%M' }}"), {}).text).toBe('10:00');
  });

  it('turns a failing render into a TemplateError with the cause', () => {
    // LiquidJS's `append` asserts its argument count when it runs.
    const template = engine.compileTemplate("{{ 'a' | append }}");
    const error = compileError(() => engine.render(template, {}));
    expect(error.message).toBe('append expect 2 arguments (line 1, col 1)');
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('does not throw on odd data', () => {
    const template = engine.compileTemplate(
      '{{ a.b.c }}{{ n | money }}{{ n | date_tz }}{{ n | phone }}{{ n | mask_phone }}{{ n | sms_safe }}{{ n | money_minor }}'
    );
    for (const n of [null, undefined, [], {}, true, 'x', -1, Number.NaN, '9'.repeat(40)]) {
      expect(() => engine.render(template, { a: n, n })).not.toThrow();
    }
  });
});

describe('conditions', () => {
  const evaluate = (expression: string, scope: Record<string, unknown>) =>
    engine.evaluate(engine.compileCondition(expression), scope);

  it.each([
    ["status == 'firing'", { status: 'firing' }, true],
    ["status == 'firing'", { status: 'resolved' }, false],
    ["total_price > 100 and currency == 'TZS'", { total_price: 150, currency: 'TZS' }, true],
    ["total_price > 100 and currency == 'TZS'", { total_price: 150, currency: 'USD' }, false],
    ["labels.severity == 'critical' or labels.severity == 'page'", { labels: { severity: 'page' } }, true],
    ["tags contains 'vip'", { tags: ['vip', 'new'] }, true],
    ['not paid', { paid: false }, true],
    ['items | size', { items: [] }, true],
    ["payload.action == 'opened'", buildScope({ body: { action: 'opened' } }), true],
    ["headers['x-github-event'] == 'push'", buildScope({ body: {}, headers: { 'X-GitHub-Event': 'push' } }), true],
  ])('%s with %j is %s', (expression, scope, expected) => {
    expect(evaluate(expression, scope)).toBe(expected);
  });

  it.each([
    [{ flag: false }, false],
    [{ flag: null }, false],
    [{}, false],
    [{ flag: 0 }, true],
    [{ flag: '' }, true],
    [{ flag: [] }, true],
    [{ flag: 'false' }, true],
  ])('uses Liquid truthiness: %j is %s', (scope, expected) => {
    expect(evaluate('flag', scope)).toBe(expected);
  });

  it.each([
    ['total | monie', 'unknown filter "monie"'],
    ["status = 'firing'", `unexpected "= 'firing'"`],
    ['status ==', 'expected a value after "=="'],
    ["== 'firing'", 'expected a value before "=="'],
    ['status firing', 'expected an operator before "firing"'],
    ['a and or b', 'expected a value between "and" and "or"'],
    ['', 'empty condition'],
    ["{{ status == 'firing' }}", "write the condition without {{ }} or {% %}, e.g. status == 'firing'"],
  ])('rejects %j at compile', (expression, message) => {
    expect(compileError(() => engine.compileCondition(expression)).message).toBe(message);
  });

  it('refuses a condition compiled by another engine', () => {
    const condition = createTemplateEngine({ currency: 'KES' }).compileCondition('a');
    expect(compileError(() => engine.evaluate(condition, {})).message).toBe('condition was compiled by another engine');
  });
});
