/**
 * A template or `when` condition that doesn't compile, or a render that failed.
 *
 * The message is short and user-facing (`unknown filter "monie"`) so callers can prefix it
 * with the config path: `routes.orders.template: unknown filter "monie"`. The LiquidJS error,
 * with its full context, stays on `cause`.
 *
 * @example
 * ```ts
 * try {
 *   engine.compileTemplate('{{ total | monie }}');
 * } catch (error) {
 *   if (error instanceof TemplateError) console.error(`routes.orders.template: ${error.message}`);
 * }
 * ```
 */
export class TemplateError extends Error {
  /** 1-based line in the source, when LiquidJS reported one. */
  public readonly line?: number;
  /** 1-based column in the source, when LiquidJS reported one. */
  public readonly column?: number;

  public constructor(
    message: string,
    options: ErrorOptions & { readonly line?: number; readonly column?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TemplateError';
    if (options.line !== undefined) this.line = options.line;
    if (options.column !== undefined) this.column = options.column;
  }
}
