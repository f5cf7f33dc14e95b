import { readFileSync } from 'node:fs';
import { compileConfig, compileRoute, engineCache, type LoadedConfig } from './compile';
import { ConfigError } from './errors';
import { describeIssues, readYaml } from './parse';
import { ConfigSchema, RouteSchema } from './schema';
import { PeopleSchema, SchedulesSchema } from './oncall-schema';
import { compileOnCall } from '../oncall/compile';
import { parseRecipientReference } from '../recipients/reference';

export { compileConfig, type CompiledRoute, type LoadedConfig } from './compile';

/**
 * Parses, validates and compiles a config: a broken template, condition or literal recipient fails
 * here, at load (and so at synth), never when the first webhook arrives.
 *
 * @example
 * ```ts
 * const { routes } = loadConfig(readFileSync('config/prod.yaml', 'utf8'), 'config/prod.yaml');
 * routes.get('alerts')?.pack.name; // 'alertmanager'
 * ```
 */
export function loadConfig(text: string, source = 'config'): LoadedConfig {
  const raw = readYaml(text, source);
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    // Still compile the routes that are well-formed, so one run reports every problem.
    const problems = describeIssues(parsed.error.issues);
    compileWellFormedRoutes(raw, problems);
    throw new ConfigError(source, problems, { cause: parsed.error });
  }
  return compileConfig(parsed.data, source);
}

/** Reads and loads `config/<env>.yaml` (or any path). */
export function loadConfigFile(path: string): LoadedConfig {
  return loadConfig(readConfigText(path), path);
}

/**
 * The text of a config file, for callers that need it besides the loaded config (the console's
 * "copy as YAML" starts from the routes as written).
 *
 * @throws {ConfigError} the file cannot be read
 */
export function readConfigText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(path, [`cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`], {
      cause: error,
    });
  }
}

function compileWellFormedRoutes(raw: unknown, problems: string[]): void {
  const { routes, people, schedules } = (raw ?? {}) as { routes?: unknown; people?: unknown; schedules?: unknown };
  // Well-formed people and schedules are checked too (names, numbers); otherwise their schema
  // problems are listed, and the routes' person: and oncall: entries are left unchecked.
  const parsedPeople = PeopleSchema.optional().safeParse(people);
  const parsedSchedules = SchedulesSchema.optional().safeParse(schedules);
  const onCall =
    parsedPeople.success && parsedSchedules.success
      ? compileOnCall(parsedPeople.data, parsedSchedules.data, problems)
      : undefined;
  if (routes === null || typeof routes !== 'object') return;
  const engineFor = engineCache();
  for (const [id, candidate] of Object.entries(routes)) {
    const route = RouteSchema.safeParse(candidate);
    if (!route.success) continue;
    const checked =
      onCall !== undefined
        ? route.data
        : {
            ...route.data,
            recipients: route.data.recipients.filter((entry) => parseRecipientReference(entry) === undefined),
          };
    compileRoute(id, checked, engineFor(checked), undefined, problems, undefined, onCall);
  }
}
