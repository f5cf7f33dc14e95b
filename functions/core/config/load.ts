import { readFileSync } from 'node:fs';
import { compileRecipients, normalizeMsisdn, type CompiledRecipients } from '../recipients';
import { sourcePack } from '../sources/registry';
import type { SourcePack } from '../sources/types';
import {
  createTemplateEngine,
  type CompiledCondition,
  type CompiledTemplate,
  type TemplateEngine,
} from '../templates';
import { ConfigError } from './errors';
import { describeIssues, readYaml } from './parse';
import { ConfigSchema, RouteSchema, type RelayConfig, type RouteConfig } from './schema';

/** A route ready for webhooks: its templates, condition and recipients compiled once, at load. */
export interface CompiledRoute {
  readonly id: string;
  readonly config: RouteConfig;
  readonly pack: SourcePack;
  readonly engine: TemplateEngine;
  readonly template: CompiledTemplate;
  readonly condition: CompiledCondition | undefined;
  readonly recipients: CompiledRecipients;
  /** The route's `senderId`, else the provider's `defaultSenderId`, else none (the service's own default). */
  readonly senderId: string | undefined;
}

export interface LoadedConfig {
  readonly config: RelayConfig;
  readonly routes: ReadonlyMap<string, CompiledRoute>;
  /** `balance.notify`, normalised to `255` + nine digits. */
  readonly balanceNotify: readonly string[];
}

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
  const config = parsed.data;
  const problems: string[] = [];
  const engineFor = engineCache();
  const routes = new Map<string, CompiledRoute>();

  for (const [id, route] of Object.entries(config.routes)) {
    const compiled = compileRoute(id, route, engineFor(route), config.provider.defaultSenderId, problems);
    if (compiled !== undefined) routes.set(id, compiled);
  }

  const balanceNotify = (config.balance?.notify ?? []).flatMap((entry, index) => {
    const normalised = normalizeMsisdn(entry);
    if (normalised.ok) return [normalised.number];
    problems.push(`balance.notify[${index}]: ${normalised.reason}`);
    return [];
  });

  if (problems.length > 0) throw new ConfigError(source, problems);
  return { config, routes, balanceNotify: [...new Set(balanceNotify)] };
}

/** Reads and loads `config/<env>.yaml` (or any path). */
export function loadConfigFile(path: string): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(path, [`cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`], { cause: error });
  }
  return loadConfig(text, path);
}

function engineCache(): (route: RouteConfig) => TemplateEngine {
  const engines = new Map<string, TemplateEngine>();
  return (route) => {
    const key = `${route.timeZone}|${route.currency}`;
    let engine = engines.get(key);
    if (engine === undefined) {
      engine = createTemplateEngine({ timeZone: route.timeZone, currency: route.currency });
      engines.set(key, engine);
    }
    return engine;
  };
}

function compileWellFormedRoutes(raw: unknown, problems: string[]): void {
  const routes = (raw as { routes?: unknown } | null)?.routes;
  if (routes === null || typeof routes !== 'object') return;
  const engineFor = engineCache();
  for (const [id, candidate] of Object.entries(routes)) {
    const route = RouteSchema.safeParse(candidate);
    if (route.success) compileRoute(id, route.data, engineFor(route.data), undefined, problems);
  }
}

function compileRoute(
  id: string,
  route: RouteConfig,
  engine: TemplateEngine,
  defaultSenderId: string | undefined,
  problems: string[],
): CompiledRoute | undefined {
  const pack = sourcePack(route.source);
  const at = (field: string): string => `routes.${id}.${field}`;
  const attempt = <T>(field: string, compile: () => T): T | undefined => {
    try {
      return compile();
    } catch (error) {
      problems.push(`${at(field)}: ${(error as Error).message}`);
      return undefined;
    }
  };

  const template = attempt('template', () => engine.compileTemplate(route.template ?? pack.defaultTemplate));
  const condition = route.when === undefined ? undefined : attempt('when', () => engine.compileCondition(route.when!));
  const recipients = attempt('recipients', () => compileRecipients(route.recipients, engine));
  if (template === undefined || recipients === undefined || (route.when !== undefined && condition === undefined)) return undefined;

  return {
    id,
    config: route,
    pack,
    engine,
    template,
    condition,
    recipients,
    senderId: route.senderId ?? defaultSenderId,
  };
}
