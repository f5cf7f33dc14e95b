/**
 * Runs one compile step of a config field and records its error as a problem naming the field,
 * so that validation reports every broken field at once instead of stopping at the first.
 *
 * @example
 * ```ts
 * const attempt = attemptFor(problems, (field) => `routes.${id}.${field}`);
 * const template = attempt('template', () => engine.compileTemplate(route.template));
 * ```
 */
export function attemptFor(
  problems: string[],
  at: (field: string) => string,
): <T>(field: string, compile: () => T) => T | undefined {
  return <T>(field: string, compile: () => T): T | undefined => {
    try {
      return compile();
    } catch (error) {
      problems.push(`${at(field)}: ${(error as Error).message}`);
      return undefined;
    }
  };
}
