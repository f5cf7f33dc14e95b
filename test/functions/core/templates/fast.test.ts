import fc from 'fast-check';
import { Drop, Liquid, Value } from 'liquidjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildScope, createTemplateEngine, TemplateError } from '../../../../functions/core/templates';
import type { CompiledCondition, CompiledTemplate, TemplateScope } from '../../../../functions/core/templates';

/**
 * The fast paths (`fast.ts`) are internal to the engine: untracked renders and `evaluate` use them,
 * tracked renders (preview) always go through LiquidJS. So every case here compares the fast
 * result with LiquidJS's own on the same engine — and, for templates made of LiquidJS built-ins, with
 * a separate plain LiquidJS instance configured as the engine configures its own — and checks which
 * path ran, so that a silent fallback can't make a comparison vacuous.
 */

const engine = createTemplateEngine();

/** LiquidJS alone, with the engine's render-relevant options (no SMS filters). */
const plainLiquid = new Liquid({
  strictFilters: true,
  strictVariables: false,
  ownPropertyOnly: true,
  timezoneOffset: 'Africa/Dar_es_Salaam',
  locale: 'en',
  templates: {},
  dynamicPartials: false,
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The text of a render, or the message of the `TemplateError` it threw. */
type Outcome = { readonly text: string } | { readonly error: string };

const outcome = (render: () => string): Outcome => {
  try {
    return { text: render() };
  } catch (error) {
    expect(error).toBeInstanceOf(TemplateError);
    return { error: (error as TemplateError).message };
  }
};

/** An untracked render, and whether LiquidJS's `renderSync` ran for it (i.e. the fast path fell back). */
const untrackedOutcome = (template: CompiledTemplate, scope: TemplateScope): { outcome: Outcome; viaLiquid: boolean } => {
  const renderSync = vi.spyOn(Liquid.prototype, 'renderSync');
  try {
    const result = outcome(() => {
      const { text, missing } = engine.render(template, scope, { trackMissing: false });
      expect(missing).toEqual([]);
      return text;
    });
    return { outcome: result, viaLiquid: renderSync.mock.calls.length > 0 };
  } finally {
    renderSync.mockRestore();
  }
};

/** `untrackedOutcome` for renders that succeed. */
const untracked = (template: CompiledTemplate, scope: TemplateScope): { text: string; viaLiquid: boolean } => {
  const { outcome: result, viaLiquid } = untrackedOutcome(template, scope);
  if (!('text' in result)) throw new Error(`render failed: ${result.error}`);
  return { text: result.text, viaLiquid };
};

/** `evaluate`, and whether LiquidJS evaluated the expression (`Value.value` ran). */
const evaluated = (condition: CompiledCondition, scope: TemplateScope): { result: boolean; viaLiquid: boolean } => {
  const value = vi.spyOn(Value.prototype, 'value');
  try {
    const result = engine.evaluate(condition, scope);
    return { result, viaLiquid: value.mock.calls.length > 0 };
  } finally {
    value.mockRestore();
  }
};

/** LiquidJS's text for `source`: the engine's tracked render, which never uses the fast path. */
const liquidText = (template: CompiledTemplate, scope: TemplateScope): string => engine.render(template, scope).text;

/** A plain LiquidJS instance's text, when `source` only uses LiquidJS's own filters. */
const plainText = (source: string, scope: TemplateScope): string | undefined => {
  let parsed;
  try {
    parsed = plainLiquid.parse(source);
  } catch {
    return undefined; // an SMS filter: the engine's tracked render is the reference
  }
  return String(plainLiquid.renderSync(parsed, scope));
};

const alertBody = {
  receiver: 'oncall',
  status: 'firing',
  alerts: [
    { status: 'firing', labels: { alertname: 'DiskFull', instance: 'db-1' }, annotations: { summary: 'Disk 95%' } },
    { status: 'firing', labels: { alertname: 'DiskFull', instance: 'db-2' }, annotations: {} },
  ],
  groupLabels: { alertname: 'DiskFull' },
  commonLabels: { alertname: 'DiskFull', severity: 'critical' },
  commonAnnotations: { oncall_phone: '0754 555 222' },
  truncatedAlerts: 0,
};

/** Data as webhooks bring it: JSON values, big integers as strings, a null-prototype `headers`. */
const SCOPES: readonly (readonly [string, TemplateScope])[] = [
  ['empty', {}],
  ['alertmanager', buildScope({ body: alertBody, headers: { 'X-GitHub-Event': 'push', 'Content-Type': 'application/json' } })],
  ['resolved, one alert', buildScope({ body: { ...alertBody, status: 'resolved', alerts: [alertBody.alerts[0]], commonAnnotations: {} } })],
  [
    'odd values',
    buildScope({
      body: {
        status: null,
        n: 0,
        neg: -1.5,
        big: 1e21,
        id: '820982911946154508',
        s: '',
        t: 'text',
        yes: true,
        no: false,
        list: [3, 'x', null, [1, 2], { a: 1 }],
        empty_list: [],
        obj: { size: 'own size', first: 'own first', nested: { deep: { value: 7 } } },
        customer: { phone: '+255 712 345 678', name: null },
        billing: { phone: 712345678 },
        keys: { name: 'phone', index: 1, neg: -1 },
        constructor: 'shadowed',
      },
      headers: { 'x-github-event': ['issues', 'push'] },
    }),
  ],
  ['array payload', buildScope({ body: [{ id: 1 }, { id: 2 }] })],
  ['scalar payload', buildScope({ body: 'hello' })],
  ['null payload', buildScope({ body: null })],
];

/** Templates the fast path compiles: outputs, filters (LiquidJS's and the SMS ones), if/unless. */
const FAST_TEMPLATES = [
  '',
  'plain text only',
  '{{ status }}',
  '{{ commonAnnotations.oncall_phone }}',
  '{{ customer.phone }}',
  '{{ billing.phone }}',
  '{{ customer.name }}|{{ missing }}|{{ missing.deeper.still }}',
  '{{ n }} {{ neg }} {{ big }} {{ id }} {{ s }} {{ t }} {{ yes }} {{ no }}',
  '{{ list }}|{{ obj }}|{{ empty_list }}|{{ payload }}',
  '{{ list.size }} {{ list.first }} {{ list.last }} {{ list[1] }} {{ list[-1] }} {{ list[3][1] }} {{ list[4].a }}',
  '{{ obj.size }} {{ obj.first }} {{ obj.nested.deep.value }} {{ obj.nested.size }} {{ t.size }} {{ t.first }} {{ n.size }}',
  '{{ alerts.size }} {{ alerts.first.labels.instance }} {{ alerts.last.labels.instance }} {{ alerts[1].annotations.summary }}',
  '{{ payload.status }} {{ payload.alerts[0].labels.alertname }} {{ payload[0].id }} {{ payload.size }} {{ payload.first.id }}',
  "{{ headers['x-github-event'] }} {{ headers['content-type'] }} {{ headers.missing }}",
  '{{ obj[keys.name] }} {{ list[keys.index] }} {{ list[keys.neg] }} {{ customer[keys.name] }}',
  '{{ "quoted" }} {{ 42 }} {{ 1.5 }} {{ true }} {{ nil }} {{ empty }} {{ blank }}',
  "{{ 'abc'.size }} {{ 'abc'.first }}",
  '{{ size }} {{ first }} {{ constructor }} {{ toString }} {{ __proto__ }} {{ obj.constructor }} {{ list.length }} {{ t.length }}',
  '{{ status | upcase }} {{ status | downcase | append: "!" }} {{ t | prepend: status }} {{ t | capitalize }}',
  '{{ commonAnnotations.summary | default: alerts.first.annotations.summary }}',
  '{{ s | default: "empty string" }} {{ no | default: "false" }} {{ no | default: "kept", allow_false: true }} {{ n | default: 1 }}',
  '{{ list | size }} {{ list | first }} {{ list | join: "," }} {{ t | split: "x" | first }} {{ n | plus: 2 | times: 3 }}',
  '{{ t | truncate: 3 }} {{ t | replace: "t", "T" }} {{ id | slice: 0, 5 }} {{ missing | append: t }}',
  '{{ customer.phone | phone }} {{ customer.phone | mask_phone }} {{ billing.phone | phone }}',
  "{{ 1234567.5 | money }} {{ 2999 | money_minor: 'USD' }} {{ '2026-03-01T10:00:00Z' | date_tz }} {{ '🔥 “Disk”' | sms_safe }}",
  "{{ '2026-03-01T10:00:00Z' | date: '%Y-%m-%d %H:%M' }}",
  '[{{ status | upcase }}{% if alerts.size > 1 %} x{{ alerts.size }}{% endif %}] {{ commonLabels.alertname }}: {{ commonAnnotations.summary | default: alerts.first.annotations.summary }}',
  "{% if status == 'firing' %}F{% elsif status == 'resolved' %}R{% else %}?{% endif %}",
  "{% unless status == 'firing' %}not firing{% elsif t %}t{% else %}firing{% endunless %}",
  '{% if n %}0 is truthy{% endif %}{% if s %}"" is truthy{% endif %}{% if status %}s{% else %}nil{% endif %}',
  '{% if list contains "x" %}has x{% endif %}{% if t contains "ex" %}ex{% endif %}{% if alerts contains nil %}nil{% endif %}',
  "{% if id > '9' %}big>9{% endif %}{% if n < 1 and neg < 0 or yes %}ok{% endif %}{% if not no %}not{% endif %}",
  '{% if n >= 0 %}a{% endif %}{% if neg <= -1.5 %}b{% endif %}{% if n != 0 %}c{% endif %}{% if id == 820982911946154508 %}d{% endif %}',
  '{% if list == empty %}e{% endif %}{% if empty_list == empty %}E{% endif %}{% if s == blank %}B{% endif %}{% if missing == nil %}N{% endif %}',
  '{% if obj == obj %}same{% endif %}{% if list == list %}eq{% endif %}{% if big > n %}gt{% endif %}',
  '{%- if yes -%}  trimmed  {%- endif -%} | {{- t -}} |',
  '{% if a %}{% if b %}ab{% else %}a{% endif %}{% elsif c %}c{% endif %}',
];

/** Generated templates, conditions and bodies for the property tests. */
const path = fc.constantFrom(
  'a', 'b', 'a.b', 'a.size', 'a.first', 'a.last', 'a[0]', 'a[-1]', 'b.c.d', 'list', 'list[1]', 'list.size',
  'missing', 'a[b]', "headers['x-id']", 'payload.a', 'n', 's'
);
const literal = fc.constantFrom("'x'", "''", '0', '1', '-1', '2.5', 'true', 'false', 'nil', 'empty', 'blank');
const operand = fc.oneof(path, literal);
const filter = fc.constantFrom('', ' | upcase', ' | size', ' | first', ' | default: "d"', ' | default: b', ' | append: a', ' | join: "-"', ' | plus: 1');
const comparison = fc
  .tuple(operand, fc.constantFrom('==', '!=', '>', '<', '>=', '<=', 'contains'), operand)
  .map(([l, op, r]) => `${l} ${op} ${r}`);
const condition = fc
  .array(fc.oneof(comparison, operand.map((o) => `not ${o}`), operand), { minLength: 1, maxLength: 3 })
  .chain((parts) => fc.constantFrom(' and ', ' or ').map((joiner) => parts.join(joiner)));
const part = fc.oneof(
  fc.constantFrom('text ', '-', ' '),
  fc.tuple(operand, filter).map(([o, f]) => `{{ ${o}${f} }}`),
  fc.tuple(fc.constantFrom('if', 'unless'), condition, operand).map(([tag, c, o]) => `{% ${tag} ${c} %}[{{ ${o} }}]{% else %}(else){% end${tag} %}`)
);
const source = fc.array(part, { maxLength: 5 }).map((parts) => parts.join(''));
const value = fc.oneof(
  fc.constantFrom(null, 0, 1, -1, 2.5, '', 'x', '1', 'abc', true, false, '820982911946154508'),
  fc.array(fc.constantFrom(1, 'x', null, 'b'), { maxLength: 3 }),
  fc.record({ b: fc.constantFrom('x', 1, null), c: fc.record({ d: fc.constantFrom(1, 'deep') }) }, { requiredKeys: [] })
);
const body = fc.record({ a: value, b: value, list: value, n: value, s: value }, { requiredKeys: [] });

describe('fast paths: templates', () => {
  describe.each(SCOPES)('on %s', (_, scope) => {
    it.each(FAST_TEMPLATES)('%j renders as LiquidJS does, without it', (source) => {
      const template = engine.compileTemplate(source);
      const fast = untracked(template, scope);
      expect(fast.viaLiquid).toBe(false);
      expect(fast.text).toBe(liquidText(template, scope));
      const plain = plainText(source, scope);
      if (plain !== undefined) expect(fast.text).toBe(plain);
    });
  });

  it('prints the bench template and recipient as before', () => {
    const scope = SCOPES[1]![1];
    const template = engine.compileTemplate(FAST_TEMPLATES[26]!);
    expect(untracked(template, scope)).toEqual({ text: '[FIRING x2] DiskFull: Disk 95%', viaLiquid: false });
    expect(untracked(engine.compileTemplate('{{ commonAnnotations.oncall_phone }}'), scope)).toEqual({
      text: '0754 555 222',
      viaLiquid: false,
    });
  });

  it.each([
    '{% for alert in alerts %}{{ alert.labels.instance }},{% endfor %}',
    '{% assign x = status | upcase %}{{ x }}',
    "{% capture c %}{{ status }}{% endcapture %}{{ c }}",
    "{% case status %}{% when 'firing' %}F{% else %}?{% endcase %}",
    '{{ (1..3) | join: "," }}',
    '{% if (1..3) contains 2 %}in{% endif %}',
    '{% raw %}{{ status }}{% endraw %}',
    '{% comment %}x{% endcomment %}{{ status }}',
    '{% liquid\necho status\n%}',
    '{% echo status %}',
  ])('leaves %j to LiquidJS, with the same text', (source) => {
    const template = engine.compileTemplate(source);
    for (const [, scope] of SCOPES) {
      const fast = untracked(template, scope);
      expect(fast.viaLiquid).toBe(true);
      expect(fast.text).toBe(liquidText(template, scope));
    }
  });

  class Money extends Drop {
    public override valueOf(): string {
      return 'TZS 5';
    }
  }
  class Customer {
    public readonly name = 'asha';
  }
  /** Each render gets its own: an iterator is consumed by the render that drives it. */
  const iterated = (): TemplateScope => ({
    it: (function* () {
      yield 1;
      return 'iterated';
    })(),
  });

  it.each([
    ['a Drop', () => ({ amount: new Money() }), '{{ amount.x }}'],
    ['a Date', () => ({ when: new Date(0) }), '{{ when.x }}'],
    ['a function', () => ({ name: () => 'called' }), '{{ name }}'],
    ['a method on plain data', () => ({ customer: { name: () => 'called' } }), '{{ customer.name }}'],
    ['a class instance', () => ({ customer: new Customer() }), '{{ customer.name }}'],
    ['a toLiquid', () => ({ customer: { toLiquid: () => ({ name: 'liquid' }) } }), '{{ customer.name }}'],
    ['an iterator', iterated, '{{ it }}'],
    ['a Map', () => ({ map: new Map([['a', 1]]) }), '{{ map.size }}'],
    ['a scope with a prototype', () => Object.create({ inherited: 'x' }) as TemplateScope, '{{ inherited }}'],
  ])('hands data holding %s to LiquidJS, with the same text', (_, scope, source) => {
    const template = engine.compileTemplate(source);
    const fast = untracked(template, scope());
    expect(fast.viaLiquid).toBe(true);
    expect(fast.text).toBe(liquidText(template, scope()));
  });

  it('prints a Drop it only passes along, as LiquidJS does (no read from it, so no fallback needed)', () => {
    const template = engine.compileTemplate('{{ amount }}|{{ amount | default: "none" }}');
    const scope = { amount: new Money() };
    expect(untracked(template, scope)).toEqual({ text: 'TZS 5|TZS 5', viaLiquid: false });
    expect(liquidText(template, scope)).toBe('TZS 5|TZS 5');
  });

  it('throws the TemplateError LiquidJS throws when a filter fails', () => {
    const template = engine.compileTemplate("{{ 'a' | append }}");
    const messages = [false, true].map((trackMissing) => {
      try {
        engine.render(template, {}, { trackMissing });
      } catch (error) {
        expect(error).toBeInstanceOf(TemplateError);
        return (error as TemplateError).message;
      }
      throw new Error('expected a TemplateError');
    });
    expect(messages[0]).toBe('append expect 2 arguments (line 1, col 1)');
    expect(messages[1]).toBe(messages[0]);
  });

  it('renders like LiquidJS on generated templates and data', () => {
    fc.assert(
      fc.property(source, body, fc.constantFrom('1', 'x'), (text, data, id) => {
        let template: CompiledTemplate;
        try {
          template = engine.compileTemplate(text);
        } catch {
          return; // not every generated expression parses
        }
        const scope = buildScope({ body: data, headers: { 'X-Id': id } });
        const fast = untrackedOutcome(template, scope);
        const reference = outcome(() => liquidText(template, scope));
        expect(fast.outcome).toEqual(reference);
        // Only a render that fails falls back (LiquidJS then throws the error itself).
        expect(fast.viaLiquid).toBe('error' in reference);
      }),
      { numRuns: 400 }
    );
  });
});

describe('fast paths: conditions', () => {
  /** LiquidJS's verdict on `expression`: an `if` in a tracked render evaluates it through LiquidJS. */
  const liquidVerdict = (expression: string, scope: TemplateScope): boolean => {
    const text = engine.render(engine.compileTemplate(`{% if ${expression} %}true{% else %}false{% endif %}`), scope).text;
    return text === 'true';
  };

  const CONDITIONS = [
    "status == 'firing'",
    "status != 'firing'",
    "status == 'firing' and commonLabels.severity == 'critical'",
    "status == 'resolved' or commonLabels.severity == 'critical'",
    "commonLabels.severity == 'critical' or commonLabels.severity == 'page' and status == 'firing'",
    "not status == 'firing'",
    'not missing',
    'alerts.size > 1',
    'alerts.size >= 2 and alerts.size <= 3',
    'truncatedAlerts == 0',
    "truncatedAlerts < '1'",
    "id == '820982911946154508'",
    'id == 820982911946154508',
    'n',
    's',
    'status',
    'missing',
    'missing.deeper',
    'list',
    'empty_list == empty',
    's == blank',
    'status == nil',
    "list contains 'x'",
    "t contains 'ex'",
    "headers['x-github-event'] == 'push'",
    "headers['x-github-event'] contains 'push'",
    "payload.status == 'firing'",
    "payload[0].id == 1",
    "obj.nested.deep.value > 6",
    'list | size',
    "status | upcase | append: '!'",
    "status | default: 'none'",
    'yes and no',
    'no or missing',
    "customer[keys.name] contains '712'",
  ];

  describe.each(SCOPES)('on %s', (_, scope) => {
    it.each(CONDITIONS)('%j evaluates as LiquidJS does, without it', (expression) => {
      const condition = engine.compileCondition(expression);
      const fast = evaluated(condition, scope);
      expect(fast.viaLiquid).toBe(false);
      expect(fast.result).toBe(liquidVerdict(expression, scope));
    });
  });

  it('evaluates like LiquidJS on generated conditions and data', () => {
    fc.assert(
      fc.property(condition, body, (expression, data) => {
        let compiled: CompiledCondition;
        try {
          compiled = engine.compileCondition(expression);
        } catch {
          return; // not every generated expression parses
        }
        const scope = buildScope({ body: data });
        const reference = outcome(() => String(liquidVerdict(expression, scope)));
        if ('error' in reference) {
          // LiquidJS fails (e.g. `<=` on an object without a prototype): so must `evaluate`, through it.
          const value = vi.spyOn(Value.prototype, 'value');
          expect(() => engine.evaluate(compiled, scope)).toThrow(TemplateError);
          expect(value).toHaveBeenCalled();
          value.mockRestore();
          return;
        }
        const fast = evaluated(compiled, scope);
        expect(fast.viaLiquid).toBe(false);
        expect(String(fast.result)).toBe(reference.text);
      }),
      { numRuns: 400 }
    );
  });

  it.each([
    ['(1..3) contains 2', {}],
    ['amount.x', { amount: new (class extends Drop {})() }],
    ['amount.x', { amount: new Date(0) }],
  ])('leaves %j on unusual data to LiquidJS, with the same verdict', (expression, scope) => {
    const condition = engine.compileCondition(expression);
    const fast = evaluated(condition, scope as TemplateScope);
    expect(fast.viaLiquid).toBe(true);
    expect(fast.result).toBe(liquidVerdict(expression, scope as TemplateScope));
  });
});
