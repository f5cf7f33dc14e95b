/**
 * A config file that cannot be used. `problems` lists every problem found, each naming the field
 * by its path (`routes.orders.template: unknown filter "monie"`), so one run shows them all.
 *
 * @example
 * ```ts
 * try { loadConfigFile('config/prod.yaml'); } catch (e) { if (e instanceof ConfigError) console.error(e.problems.join('\n')); }
 * ```
 */
export class ConfigError extends Error {
  public readonly problems: readonly string[];

  public constructor(source: string, problems: readonly string[], options?: ErrorOptions) {
    super(`${source}: invalid config\n${problems.map((problem) => `  - ${problem}`).join('\n')}`, options);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}
