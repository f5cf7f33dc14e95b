/**
 * The Lambda wiring's own error: a bad environment. The secrets' errors are the adapters' (see
 * `functions/adapters/errors.ts`).
 */

/**
 * The Lambda environment variables are missing or invalid. `problems` lists every one found, so
 * a misconfigured function is fixed in one deploy.
 *
 * @example
 * ```ts
 * try { readEnvironment(); } catch (error) { if (error instanceof EnvironmentError) console.error(error.problems); }
 * ```
 */
export class EnvironmentError extends Error {
  public readonly problems: readonly string[];

  public constructor(problems: readonly string[]) {
    super(`invalid relay environment: ${problems.join('; ')}`);
    this.name = 'EnvironmentError';
    this.problems = problems;
  }
}
