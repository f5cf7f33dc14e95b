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
  /**
   * Paths of the scope variables the template reads (`customer.name`, `items[i].sku`),
   * found by static analysis. Loop variables and `assign`ed names are not included.
   */
  readonly variables: readonly string[];
}

/** A parsed `when` expression. Only the engine that compiled it can evaluate it. */
export interface CompiledCondition {
  readonly source: string;
}

export interface RenderResult {
  readonly text: string;
  /**
   * Variable paths the template reads that were `undefined` or `null` in the scope: they rendered
   * empty. For warnings (`preview`), not errors: a path guarded by `{% if %}` or `default` is
   * still listed when absent.
   */
  readonly missing: readonly string[];
}

export interface TemplateEngine {
  /** The options after defaults and validation (currency upper-cased, locale canonical). */
  readonly options: Readonly<Required<TemplateEngineOptions>>;
  /** Parses `source` eagerly. Throws `TemplateError` on syntax errors and unknown filters or tags. */
  compileTemplate(source: string): CompiledTemplate;
  /** Parses a Liquid expression such as `status == 'firing'`. Throws `TemplateError`. */
  compileCondition(expression: string): CompiledCondition;
  /** Renders; missing variables render empty. Throws `TemplateError` only if rendering itself fails. */
  render(template: CompiledTemplate, scope: TemplateScope): RenderResult;
  /** Liquid truthiness: only `false` and `nil` (null/undefined) are falsy; `0` and `''` are true. */
  evaluate(condition: CompiledCondition, scope: TemplateScope): boolean;
}
