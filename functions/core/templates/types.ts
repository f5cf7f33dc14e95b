/** Options of a template engine; every template it compiles renders with these. */
export interface TemplateEngineOptions {
  /** IANA zone for `date_tz` and LiquidJS's `date` filter. Defaults to `Africa/Dar_es_Salaam`. */
  readonly timeZone?: string;
  /** ISO 4217 code used by `money` and `money_minor` when no currency is given. Defaults to `TZS`. */
  readonly currency?: string;
  /** BCP 47 locale for number grouping and month/day names. Defaults to `en`. */
  readonly locale?: string;
}

/** The variables a template sees: see `buildScope` for how a webhook becomes one. */
export type TemplateScope = Readonly<Record<string, unknown>>;

/** A parsed template, ready to render many times. Only the engine that compiled it can render it. */
export interface CompiledTemplate {
  readonly source: string;
}

/** A parsed `when` expression. Only the engine that compiled it can evaluate it. */
export interface CompiledCondition {
  readonly source: string;
}

/** Options of one `render` call. */
export interface RenderOptions {
  /**
   * Whether to fill `RenderResult.missing`. Defaults to `true`. Tracking renders through a second,
   * instrumented parse of the template (made on first use) and looks some variables up twice;
   * pass `false` where only the text matters, such as the per-webhook path.
   */
  readonly trackMissing?: boolean;
  /**
   * Milliseconds this render may take (LiquidJS `renderLimit`); past it the render stops with a
   * `render limit exceeded` `TemplateError`. Defaults to `TEMPLATE_LIMITS.renderMs`; the pipeline
   * passes what is left of one webhook's budget, so fan-out items share it.
   */
  readonly renderLimitMs?: number;
}

export interface RenderResult {
  readonly text: string;
  /**
   * The variables that printed empty because they were `undefined` or `null` during this render,
   * each path once, as written in the template (`customer.name`, `item.sku`, `items[i].sku`,
   * `headers['x-github-event']`), in the order first read. For warnings (`preview`), not errors.
   * Always empty when rendered with `trackMissing: false`.
   *
   * Only what was evaluated counts, so branches not taken and loops over nothing report nothing.
   * A read counts when its value is printed by `{{ }}` or `{% echo %}`, on its own or through
   * filters, or is a filter argument (`append: suffix`). It doesn't count:
   * - in conditions and other tags (`if`, `unless`, `case`/`when`, `for` collections, `assign`):
   *   they test presence or name a value, they don't print;
   * - in an output computed with operators (`{{ a == b }}` prints a boolean);
   * - when a `default` filter comes after it in the chain: it is optional by design. The
   *   `default` fallback itself counts only when it was used and was missing too, e.g.
   *   `{{ message | default: text }}` reports `text` only when both are absent (or `message` is
   *   empty).
   *
   * A local name (`assign`, `capture`) that holds nil is reported by that name.
   *
   * @example
   * ```ts
   * const template = engine.compileTemplate(
   *   '{% if paid %}{{ customer.name }}{% endif %} {{ note | default: "-" }} {{ order.id }}'
   * );
   * engine.render(template, { paid: true, customer: {} }).missing; // ['customer.name', 'order.id']
   * engine.render(template, { paid: false, order: { id: 7 } }).missing; // []
   * ```
   */
  readonly missing: readonly string[];
}

export interface TemplateEngine {
  /** The options after defaults and validation (currency upper-cased, locale canonical unless `checked`). */
  readonly options: Readonly<Required<TemplateEngineOptions>>;
  /**
   * Parses `source` eagerly (an engine created `checked` parses it on its first render). Throws
   * `TemplateError` on syntax errors and unknown filters or tags.
   */
  compileTemplate(source: string): CompiledTemplate;
  /** Parses a Liquid expression such as `status == 'firing'`. Throws `TemplateError`. */
  compileCondition(expression: string): CompiledCondition;
  /**
   * Renders; missing variables render empty and, unless `trackMissing` is `false`, are listed in
   * `missing` (see `RenderResult.missing` for which). Throws `TemplateError` only if rendering
   * itself fails.
   *
   * @example
   * ```ts
   * const template = engine.compileTemplate('Hi {{ customer.name }}');
   * engine.render(template, {}); // { text: 'Hi ', missing: ['customer.name'] }
   * engine.render(template, {}, { trackMissing: false }); // { text: 'Hi ', missing: [] }
   * ```
   */
  render(template: CompiledTemplate, scope: TemplateScope, options?: RenderOptions): RenderResult;
  /** Liquid truthiness: only `false` and `nil` (null/undefined) are falsy; `0` and `''` are true. */
  evaluate(condition: CompiledCondition, scope: TemplateScope): boolean;
}
