import { readFileSync } from 'node:fs';
import { Liquid } from 'liquidjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { github } from '../../../../functions/core/sources/github';
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
const missing = (source: string, scope: Record<string, unknown> = {}) => render(source, scope).missing;

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

describe('createTemplateEngine for a checked config (checked: true)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('is cached apart from the checking engine of the same options', () => {
    const checked = createTemplateEngine({}, { checked: true });
    expect(checked).not.toBe(engine);
    expect(createTemplateEngine({ currency: 'tzs' }, { checked: true })).toBe(checked);
    expect(checked.options).toEqual(engine.options);
  });

  it('builds no Intl formatter for its options, and its date filter still uses its zone', () => {
    // A zone and currency no other test of this file uses: their formatters are not cached yet.
    const dateFormats = vi.spyOn(Intl, 'DateTimeFormat');
    const numberFormats = vi.spyOn(Intl, 'NumberFormat');
    const chatham = createTemplateEngine({ timeZone: 'Pacific/Chatham', currency: 'nzd' }, { checked: true });
    expect(chatham.options).toEqual({ timeZone: 'Pacific/Chatham', currency: 'NZD', locale: 'en' });
    const template = chatham.compileTemplate("{{ '2026-03-01T10:00:00Z' | date: '%H:%M' }} {{ 5 | money }}");
    expect(dateFormats).not.toHaveBeenCalled();
    expect(numberFormats).not.toHaveBeenCalled();
    vi.restoreAllMocks(); // the spies do not construct formatters the render can use
    expect(chatham.render(template, {}, { trackMissing: false }).text).toBe('23:45 NZD 5.00');
  });

  it('parses a template on its first render, once, and renders what a checking engine renders', () => {
    const source = '{% if paid %}Paid: {{ total | money }}{% else %}{{ name }} owes{% endif %}';
    const checked = createTemplateEngine({}, { checked: true });
    const parses = vi.spyOn(Liquid.prototype, 'parse');
    const template = checked.compileTemplate(source);
    expect(parses).not.toHaveBeenCalled();
    const eager = engine.compileTemplate(source);
    for (const scope of [
      { paid: true, total: 1500 },
      { paid: false, name: 'Asha' },
    ])
      expect(checked.render(template, scope, { trackMissing: false })).toEqual(
        engine.render(eager, scope, { trackMissing: false }),
      );
    // Once for the two renders above, once for the checking engine's compile.
    expect(parses).toHaveBeenCalledTimes(2);
    expect(checked.render(template, { paid: true })).toEqual({ text: 'Paid: ', missing: ['total'] });
  });

  it('reports a template that does not parse when it is rendered, as a TemplateError', () => {
    const checked = createTemplateEngine({}, { checked: true });
    const template = checked.compileTemplate('Hi {{ name ');
    for (const trackMissing of [false, true])
      expect(compileError(() => checked.render(template, {}, { trackMissing })).message).toBe(
        'output "{{ name " not closed (line 1, col 4)',
      );
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
      `the "${tag}" tag is not available`,
    );
  });

  it('keeps the source', () => {
    expect(engine.compileTemplate('Hi {{ name }}')).toEqual({ source: 'Hi {{ name }}' });
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

  it('resolves dynamic indexes as rendered, reporting the path as written', () => {
    expect(render('{{ items[i].sku }}', { items: [{ sku: 'A' }], i: 0 })).toEqual({ text: 'A', missing: [] });
    expect(missing('{{ items[i].sku }}', { items: [{ sku: 'A' }], i: 3 })).toEqual(['items[i].sku']);
    expect(missing('{{ items[i].sku }}', { items: [{ sku: 'A' }] })).toEqual(['items[i].sku']);
  });

  it('prints big-integer strings exactly', () => {
    const scope = buildScope({ body: { id: '820982911946154508', order: { id: '9007199254740993' } } });
    expect(engine.render(engine.compileTemplate('{{ id }} {{ order.id }} {{ payload.id }}'), scope).text).toBe(
      '820982911946154508 9007199254740993 820982911946154508',
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
      '{{ a.b.c }}{{ n | money }}{{ n | date_tz }}{{ n | phone }}{{ n | mask_phone }}{{ n | sms_safe }}{{ n | money_minor }}',
    );
    for (const n of [null, undefined, [], {}, true, 'x', -1, Number.NaN, '9'.repeat(40)]) {
      expect(() => engine.render(template, { a: n, n })).not.toThrow();
    }
  });
});

describe('render: missing', () => {
  const GITHUB_HEADERS = (event: string) => ({ 'X-GitHub-Event': event });

  it('ignores branches not taken (the GitHub pack template on a push)', () => {
    const fixture = new URL('../../../../examples/github/push.json', import.meta.url);
    const body = JSON.parse(readFileSync(fixture, 'utf8')) as unknown;
    const template = engine.compileTemplate(github.defaultTemplate);
    expect(engine.render(template, buildScope({ body, headers: GITHUB_HEADERS('push') }))).toEqual({
      text: '[kilimo-labs/sms-relay] amina-mushi pushed 2 commit(s) to main',
      missing: [],
    });
    // The same template still reports what the taken branch lacks.
    const issue = buildScope({ body: { action: 'opened' }, headers: GITHUB_HEADERS('issues') });
    expect(engine.render(template, issue).missing).toEqual([
      'repository.full_name',
      'issue.number',
      'sender.login',
      'issue.title',
    ]);
  });

  it.each([
    ['{% if paid %}{{ total }}{% else %}{{ reason }}{% endif %}', { paid: true, total: 5 }, []],
    ['{% if paid %}{{ total }}{% else %}{{ reason }}{% endif %}', { paid: false }, ['reason']],
    ["{% case kind %}{% when 'a' %}{{ a }}{% when 'b' %}{{ b }}{% else %}{{ c }}{% endcase %}", { kind: 'b' }, ['b']],
    ['{% unless quiet %}{{ loud }}{% endunless %}', { quiet: true }, []],
    ['{% for x in list %}{{ inside }}{% else %}{{ empty_note }}{% endfor %}', { list: [] }, ['empty_note']],
  ])('reports only what the render evaluated: %s with %j', (source, scope, expected) => {
    expect(missing(source, scope)).toEqual(expected);
  });

  it.each([
    ['{% if customer.phone %}call{% endif %}', {}],
    ['{% unless vip %}regular{% endunless %}', {}],
    ["{% case tier %}{% when 'gold' %}gold{% endcase %}", {}],
    ["{% if a and b.c or d == 'x' %}yes{% endif %}", {}],
    ['{% for line in line_items %}{{ line }}{% endfor %}', {}],
    ['{% assign n = order_number %}', {}],
    ['{{ a == b }} {{ a or b }}', {}],
  ])('does not report reads that only test presence: %s', (source, scope) => {
    expect(missing(source, scope)).toEqual([]);
  });

  it.each([
    ["{{ note | default: 'none' }}", {}, 'none', []],
    ['{{ message | default: text }}', { message: 'hi' }, 'hi', []],
    ['{{ message | default: text }}', { text: 'fallback' }, 'fallback', []],
    ['{{ message | default: text }}', {}, '', ['text']],
    ['{{ message | default: text }}', { message: '' }, '', ['text']],
    ["{{ name | upcase | default: 'anon' }}", {}, 'anon', []],
    ["{{ name | append: suffix | default: 'anon' }}", { name: 'A' }, 'A', []],
    ["{{ name | default: 'anon' | append: suffix }}", {}, 'anon', ['suffix']],
    ["{{ a | default: b | default: 'z' }}", {}, 'z', []],
    ['{{ flag | default: other, allow_false: true }}', { flag: false }, 'false', []],
  ])('treats a read followed by default as optional: %s with %j', (source, scope, text, expected) => {
    expect(render(source, scope)).toEqual({ text, missing: expected });
  });

  it('reports a plain missing path once, in reading order', () => {
    expect(render('{{ missing.path }}-{{ other }}-{{ missing.path }}')).toEqual({
      text: '--',
      missing: ['missing.path', 'other'],
    });
  });

  it('reports a loop variable path as written, once however many items lack it', () => {
    expect(
      render('{% for item in items %}{{ item.sku }}:{{ item.qty }} {% endfor %}', {
        items: [{ sku: 'A', qty: 1 }, { qty: 2 }, {}],
      }),
    ).toEqual({ text: 'A:1 :2 : ', missing: ['item.sku', 'item.qty'] });
  });

  it('reports the fan-out item as written', () => {
    const scope = buildScope({ body: {}, extra: { item: { name: 'x' } } });
    expect(render('{{ item.name }} {{ item.price | money }}', scope)).toEqual({ text: 'x ', missing: ['item.price'] });
  });

  it('reports missing filter arguments', () => {
    expect(render("{{ 'Order' | append: suffix }} {{ total | money: currency }}", { total: 5 })).toEqual({
      text: 'Order TZS 5.00',
      missing: ['suffix', 'currency'],
    });
  });

  it('tracks echo, also inside liquid tags', () => {
    expect(render('{% echo first %}{% liquid\necho second | upcase\n%}', { second: 'b' })).toEqual({
      text: 'B',
      missing: ['first'],
    });
  });

  it('reports bracket paths as written', () => {
    expect(missing("{{ headers['x-github-event'] }}", { headers: {} })).toEqual(["headers['x-github-event']"]);
  });

  it('keeps renders independent', () => {
    const template = engine.compileTemplate('{{ a }}{{ b }}');
    expect(engine.render(template, { a: 1 }).missing).toEqual(['b']);
    expect(engine.render(template, { b: 1 }).missing).toEqual(['a']);
    expect(engine.render(template, {}, { trackMissing: false })).toEqual({ text: '', missing: [] });
    expect(engine.render(template, { a: 1, b: 2 }).missing).toEqual([]);
  });

  it('renders the documented example', () => {
    const template = engine.compileTemplate(
      '{% if paid %}{{ customer.name }}{% endif %} {{ note | default: "-" }} {{ order.id }}',
    );
    expect(engine.render(template, { paid: true, customer: {} }).missing).toEqual(['customer.name', 'order.id']);
    expect(engine.render(template, { paid: false, order: { id: 7 } }).missing).toEqual([]);
  });

  describe('with trackMissing: false', () => {
    const sources = [
      'Order {{ order_number }} for {{ customer.name | upcase }} {{ note | default: "-" }}',
      '{% for item in items %}{{ forloop.index }}. {{ item.sku | append: "!" }} {% endfor %}',
      "{% case kind %}{% when 'a' %}{% echo total | money %}{% else %}{{ total | money_minor: 'USD' }}{% endcase %}",
      '{% capture c %}{{ customer.name }}{% endcapture %}{% assign n = c | size %}{{ c }}/{{ n }}{{ a == b }}',
    ];
    const scopes = [
      {},
      { order_number: 7, customer: { name: 'asha' }, items: [{ sku: 'A' }, {}], kind: 'a', total: 1250 },
      { note: '', items: [], kind: 'b', total: '99', customer: null },
    ];

    it.each(sources)('renders the same text with an empty missing: %s', (source) => {
      const template = engine.compileTemplate(source);
      for (const scope of scopes) {
        const tracked = engine.render(template, scope);
        expect(engine.render(template, scope, { trackMissing: false })).toEqual({ text: tracked.text, missing: [] });
      }
    });

    it('is not affected by tracked renders of the same template', () => {
      const template = engine.compileTemplate('{{ a }}');
      expect(engine.render(template, {}, { trackMissing: false }).missing).toEqual([]);
      expect(engine.render(template, {}).missing).toEqual(['a']);
      expect(engine.render(template, {}, { trackMissing: false }).missing).toEqual([]);
    });
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

describe('limits (LiquidJS parseLimit, renderLimit, memoryLimit)', () => {
  const renderError = (source: string, scope: Record<string, unknown> = {}): TemplateError =>
    compileError(() => engine.render(engine.compileTemplate(source), scope, { trackMissing: false }));

  it('refuses a template longer than the parse limit, and takes one at the limit', () => {
    const error = compileError(() => engine.compileTemplate('x'.repeat(65_537)));
    expect(error.message).toBe('parse limit exceeded: the template is longer than 65536 characters');
    expect(engine.compileTemplate('x'.repeat(65_536)).source).toHaveLength(65_536);
  });

  it('refuses a condition longer than the parse limit', () => {
    const error = compileError(() => engine.compileCondition(`a == '${'x'.repeat(65_536)}'`));
    expect(error.message).toBe('parse limit exceeded: the condition is longer than 65536 characters');
  });

  it('stops a render that builds past the memory limit, before building it', () => {
    // 30 million loop items: the range alone is refused.
    expect(renderError('{% for i in (1..30000000) %}x{% endfor %}').message).toMatch(
      /^memory limit exceeded: the template built more than 10000000 characters or items \(line 1, col \d+\)$/,
    );
    // A string doubled 40 times (a terabyte).
    expect(
      renderError('{% assign s = "xy" %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}{{ s | size }}')
        .message,
    ).toMatch(/^memory limit exceeded/);
  });

  it('stops a condition that builds past the memory limit', () => {
    const condition = engine.compileCondition('(1..20000000) contains 5');
    expect(compileError(() => engine.evaluate(condition, {})).message).toMatch(/^memory limit exceeded/);
  });

  it('stops a render that runs past the render limit', () => {
    // 50 million iterations over a payload array (no memory built): seconds on any machine.
    const items = Array.from({ length: 1_000 }, (_, index) => index);
    const error = renderError(
      '{% for a in items %}{% for b in items %}{% for c in (1..50) %}{% endfor %}{% endfor %}{% endfor %}',
      { items },
    );
    expect(error.message).toMatch(/^render limit exceeded: the template ran longer than 1000 ms \(line 1, col \d+\)$/);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('gives a render the time it is told is left, tracked or not', () => {
    const template = engine.compileTemplate('{% for a in items %}{% for b in items %}{% endfor %}{% endfor %}');
    const items = Array.from({ length: 3_000 }, (_, index) => index);
    for (const trackMissing of [false, true]) {
      expect(
        compileError(() => engine.render(template, { items }, { trackMissing, renderLimitMs: 0 })).message,
      ).toMatch(/^render limit exceeded/);
    }
  });

  it('leaves ordinary templates alone', () => {
    const items = Array.from({ length: 1_000 }, (_, index) => ({ name: `n${index}` }));
    const { text } = engine.render(
      engine.compileTemplate(
        '{% for item in items %}{{ item.name | upcase }},{% endfor %}{{ items | map: "name" | join: "" | size }}',
      ),
      { items },
    );
    expect(text.endsWith('N999,3890')).toBe(true);
  });
});
