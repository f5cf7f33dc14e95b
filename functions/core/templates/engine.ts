import { Context, Liquid, Value, isTruthy, toValueSync } from 'liquidjs';
import type { Template } from 'liquidjs';
import { DEFAULT_CURRENCY, DEFAULT_TIME_ZONE, TEMPLATE_LIMITS } from '../defaults';
import { isTimeZone } from '../local-time';
import { assertCompleteExpression } from './condition';
import { TemplateError } from './errors';
import { createSmsFilters } from './filters';
import { toTemplateError } from './liquid-errors';
import type {
  CompiledCondition,
  CompiledTemplate,
  RenderOptions,
  RenderResult,
  TemplateEngine,
  TemplateEngineOptions,
  TemplateScope,
} from './types';
import { instrumentMissing, TrackingContext } from './tracking';

/** Defaults of `createTemplateEngine`: Tanzania. */
export const DEFAULT_TEMPLATE_OPTIONS = {
  timeZone: DEFAULT_TIME_ZONE,
  currency: DEFAULT_CURRENCY,
  locale: 'en',
} as const;

// Templates come from config, not files: these tags would read the file system.
const FILE_TAGS = ['include', 'render', 'layout'] as const;

interface ParsedTemplate {
  /** Parsed by `compileTemplate`, or on the first render for an engine created `checked`. */
  templates?: Template[];
  /** A second parse with instrumented outputs, made on the first tracked render (preview only). */
  tracking?: Template[];
}

const NOTHING_MISSING: readonly string[] = Object.freeze([]);

const resolveOptions = (
  {
    timeZone = DEFAULT_TEMPLATE_OPTIONS.timeZone,
    currency = DEFAULT_TEMPLATE_OPTIONS.currency,
    locale = DEFAULT_TEMPLATE_OPTIONS.locale,
  }: TemplateEngineOptions,
  checked: boolean,
): Required<TemplateEngineOptions> => {
  // Validated at synth already; the checks below would be the process's first use of ICU, which starts it.
  if (checked) return { timeZone, currency: currency.toUpperCase(), locale };
  // Validation only: the spelling is kept (ICU would turn `Asia/Kolkata` into `Asia/Calcutta`,
  // and `%Z` prints it).
  if (!isTimeZone(timeZone)) throw new TemplateError(`unknown time zone "${timeZone}"`);
  let canonicalLocale: string;
  try {
    canonicalLocale = Intl.getCanonicalLocales(locale)[0] ?? DEFAULT_TEMPLATE_OPTIONS.locale;
  } catch (error) {
    throw new TemplateError(`invalid locale "${locale}"`, { cause: error });
  }
  const code = currency.toUpperCase();
  try {
    new Intl.NumberFormat(canonicalLocale, { style: 'currency', currency: code });
  } catch (error) {
    throw new TemplateError(`invalid currency "${currency}"`, { cause: error });
  }
  return { timeZone, currency: code, locale: canonicalLocale };
};

const createLiquid = (options: Required<TemplateEngineOptions>): Liquid => {
  const liquid = new Liquid({
    strictFilters: true,
    // Missing variables render empty; a tracked `render` reports them in `missing` instead.
    strictVariables: false,
    // `{{ payload.constructor }}` and friends read nothing.
    ownPropertyOnly: true,
    // Makes LiquidJS's own `date` filter use the engine's zone (resolved per date, DST-aware).
    timezoneOffset: options.timeZone,
    locale: options.locale,
    // No file system behind templates; see FILE_TAGS.
    templates: {},
    dynamicPartials: false,
    // A template must never hold the process: a huge loop or a doubling string is stopped with a
    // reason (see TEMPLATE_LIMITS and toTemplateError).
    parseLimit: TEMPLATE_LIMITS.parseChars,
    renderLimit: TEMPLATE_LIMITS.renderMs,
    memoryLimit: TEMPLATE_LIMITS.memory,
  });
  for (const [name, filter] of Object.entries(createSmsFilters(options))) liquid.registerFilter(name, filter);
  for (const name of FILE_TAGS) {
    liquid.registerTag(name, {
      parse() {
        throw new Error(`the "${name}" tag is not available: templates can't read files`);
      },
      render() {
        return '';
      },
    });
  }
  return liquid;
};

const build = (options: Required<TemplateEngineOptions>, checked: boolean): TemplateEngine => {
  const liquid = createLiquid(options);
  // Compiled objects stay plain data; what the engine needs to run them lives here, which also
  // stops a template compiled under other options (another zone) from rendering here.
  const parsedTemplates = new WeakMap<CompiledTemplate, ParsedTemplate>();
  const parsedConditions = new WeakMap<CompiledCondition, Value>();

  const newContext = (scope: TemplateScope): Context => new Context(scope, liquid.options, { sync: true }, { liquid });
  const parse = (source: string): Template[] => {
    try {
      return liquid.parse(source);
    } catch (error) {
      throw toTemplateError(error);
    }
  };

  return Object.freeze({
    options: Object.freeze({ ...options }),

    compileTemplate(source: string): CompiledTemplate {
      const compiled: CompiledTemplate = Object.freeze({ source });
      parsedTemplates.set(compiled, checked ? {} : { templates: parse(source) });
      return compiled;
    },

    compileCondition(expression: string): CompiledCondition {
      const trimmed = expression.trim();
      if (trimmed === '') throw new TemplateError('empty condition');
      if (trimmed.length > TEMPLATE_LIMITS.parseChars) {
        // Conditions are read by LiquidJS's tokenizer, which `parseLimit` does not cover.
        throw new TemplateError(
          `parse limit exceeded: the condition is longer than ${TEMPLATE_LIMITS.parseChars} characters`,
        );
      }
      if (/^\{[{%]/.test(trimmed)) {
        throw new TemplateError("write the condition without {{ }} or {% %}, e.g. status == 'firing'");
      }
      let value: Value;
      try {
        assertCompleteExpression(trimmed, liquid);
        value = new Value(trimmed, liquid);
      } catch (error) {
        throw toTemplateError(error);
      }
      const compiled: CompiledCondition = Object.freeze({ source: expression });
      parsedConditions.set(compiled, value);
      return compiled;
    },

    render(
      template: CompiledTemplate,
      scope: TemplateScope,
      { trackMissing = true, renderLimitMs = TEMPLATE_LIMITS.renderMs }: RenderOptions = {},
    ): RenderResult {
      const parsed = parsedTemplates.get(template);
      if (!parsed) throw new TemplateError('template was compiled by another engine');
      const renderOptions = { sync: true, renderLimit: Math.max(0, renderLimitMs) };
      try {
        if (!trackMissing) {
          parsed.templates ??= parse(template.source);
          const context = new Context(scope, liquid.options, renderOptions, { liquid });
          return { text: String(liquid.renderSync(parsed.templates, context)), missing: NOTHING_MISSING };
        }
        if (!parsed.tracking) {
          // Parsed again rather than instrumenting `templates`, so untracked renders keep
          // LiquidJS's own code path; the source compiled, or was checked, so this can't throw.
          const tracking = parse(template.source);
          instrumentMissing(tracking);
          parsed.tracking = tracking;
        }
        const context = new TrackingContext(scope, liquid.options, renderOptions, { liquid });
        const text = String(liquid.renderSync(parsed.tracking, context));
        return { text, missing: [...context.missing] };
      } catch (error) {
        throw toTemplateError(error);
      }
    },

    evaluate(condition: CompiledCondition, scope: TemplateScope): boolean {
      const value = parsedConditions.get(condition);
      if (!value) throw new TemplateError('condition was compiled by another engine');
      try {
        const context = newContext(scope);
        return isTruthy(toValueSync(value.value(context, false)), context);
      } catch (error) {
        throw toTemplateError(error);
      }
    },
  });
};

const engines = new Map<string, TemplateEngine>();

/**
 * Creates the engine that compiles and renders templates and `when` conditions. Engines are
 * cached per options set: calling this again with the same options returns the same engine,
 * so there's one LiquidJS instance per options set however often config is loaded.
 *
 * On top of standard Liquid (LiquidJS 10) it registers the SMS filters listed in `SMS_FILTERS`,
 * makes `date` use `timeZone`, turns unknown filters into compile errors, renders missing
 * variables empty, refuses `include`/`render`/`layout` (there are no template files), and applies
 * LiquidJS's parse, render and memory limits (`TEMPLATE_LIMITS`): a template past one is a
 * `TemplateError` whose message starts with `parse limit exceeded`, `render limit exceeded` or
 * `memory limit exceeded`.
 *
 * Throws `TemplateError` for an unknown time zone, invalid locale or malformed currency code.
 *
 * `checked: true` is for a config checked already by this same code (the config staged at synth,
 * which `loadConfig` compiled there): the options are not validated again, and each template is
 * parsed on its first render rather than by `compileTemplate`, so a Lambda's init neither starts
 * ICU nor parses templates its container may never render (the digest templates, other routes').
 * Such engines are cached apart from checking ones.
 *
 * @example
 * ```ts
 * const engine = createTemplateEngine();
 * const template = engine.compileTemplate('Order #{{ order_number }}: {{ total_price | money }}');
 * const when = engine.compileCondition("financial_status == 'paid'");
 * const scope = buildScope({ body, headers });
 * if (engine.evaluate(when, scope)) {
 *   const { text } = engine.render(template, scope, { trackMissing: false }); // the relay
 *   const { missing } = engine.render(template, scope); // preview: warns about missing variables
 * }
 * ```
 */
export const createTemplateEngine = (
  options: TemplateEngineOptions = {},
  { checked = false }: { readonly checked?: boolean } = {},
): TemplateEngine => {
  const resolved = resolveOptions(options, checked);
  const key = `${checked ? 'checked|' : ''}${resolved.timeZone}|${resolved.currency}|${resolved.locale}`;
  let engine = engines.get(key);
  if (!engine) {
    engine = build(resolved, checked);
    engines.set(key, engine);
  }
  return engine;
};
