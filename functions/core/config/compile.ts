import { compileOnCall } from '../oncall/compile';
import { NO_ONE, type OnCallDirectory } from '../oncall/schedule';
import { compilePaging, type CompiledPaging } from '../paging/compile';
import { parseRecipientReference, RecipientReferenceKind } from '../recipients/reference';
import { RecipientEntryKind } from '../recipients/types';
import { compileAllowList } from '../recipients/allow';
import { compileRecipients } from '../recipients/compile';
import { maskNumbersInText } from '../recipients/mask-text';
import { DEFAULT_COUNTRY } from '../recipients/e164';
import { type Numbering, noProviderReason, normalizeRecipient } from '../recipients/numbering';
import { sourcePack } from '../sources/registry';
import type { SourcePack } from '../sources/types';
import { createTemplateEngine } from '../templates/engine';
import type { CompiledCondition, CompiledTemplate, TemplateEngine } from '../templates/types';
import type { CompiledRecipients } from '../recipients/types';
import { defaultDigestTemplate } from '../windows';
import { ConfigError } from './errors';
import type { RelayConfig, RouteConfig } from './schema';
import type { RelayConfigView, RouteView } from './view';
import { attemptFor } from './attempt';
import { ProviderType } from '../provider/outcome';
import { maskMsisdn } from '../recipients/mask';
import { compileProviderRouting, type ProviderRouting, type RoutingSettings } from './routing';

/** A route ready for webhooks: its templates, condition and recipients compiled once, at load. */
export interface CompiledRoute extends RouteView {
  readonly pack: SourcePack;
  readonly engine: TemplateEngine;
  readonly template: CompiledTemplate;
  readonly condition: CompiledCondition | undefined;
  readonly recipients: CompiledRecipients;
  /** The digest SMS's template (`digestTemplate`, else the source's default). */
  readonly digestTemplate: CompiledTemplate;
  /** `escalate`, `renotify`, `ack` and `incident`, compiled; absent: the route opens no incident. */
  readonly paging?: CompiledPaging;
}

export interface LoadedConfig extends RelayConfigView {
  readonly routes: ReadonlyMap<string, CompiledRoute>;
  /** `people` and `schedules`, compiled: what `person:` and `oncall:` recipients name. */
  readonly onCall: OnCallDirectory;
}

/**
 * What an earlier compile of the same config worked out (the staged config carries it from synth):
 * given, the numbers are not normalised again, the routes' zones and currencies not validated
 * again, and each template is parsed on its first render (a `checked` engine, see
 * `createTemplateEngine`).
 */
export interface CompiledBefore {
  /** Per route id, its `recipientNumbers`. */
  readonly recipientNumbers: (routeId: string) => ReadonlyArray<readonly string[] | null> | undefined;
  readonly balanceNotify: readonly string[];
}

/**
 * Compiles a validated config (templates, conditions, recipients). It neither parses YAML nor
 * validates the schema: `loadConfig` does both before calling it, and the Lambda handlers call it
 * on the JSON staged at synth from an already validated config, without loading yaml or zod.
 *
 * @throws {ConfigError} a template, condition or literal recipient does not compile (every problem listed)
 *
 * @example
 * ```ts
 * const { routes } = compileConfig(parseConfig(text, 'config/prod.yaml'), 'config/prod.yaml');
 * ```
 */
export function compileConfig(config: RelayConfig, source = 'config', before?: CompiledBefore): LoadedConfig {
  const problems: string[] = [];
  // Compiled before (staged at synth): its options and templates were checked there.
  const engineFor = engineCache({ checked: before !== undefined });
  const routes = new Map<string, CompiledRoute>();
  const numbering = numberingOf(config);
  const onCall = compileOnCall(config.people, config.schedules, problems, numbering);

  for (const [id, route] of Object.entries(config.routes)) {
    const compiled = compileRoute(
      id,
      route,
      engineFor(route),
      config.provider.defaultSenderId,
      problems,
      before?.recipientNumbers(id),
      onCall,
      numbering,
    );
    if (compiled !== undefined) routes.set(id, compiled);
  }

  // Checks of the config as written; a config compiled before passed them at synth, so a cold
  // start does not route every literal number again.
  if (before === undefined) {
    literalsWithoutProvider(routes, onCall, compileProviderRouting(routingSettings(config)), problems);
  }

  const balanceNotify =
    before?.balanceNotify ??
    (config.balance?.notify ?? []).flatMap((entry, index) => {
      const reference = parseRecipientReference(entry);
      if (reference !== undefined) {
        const person = reference.kind === RecipientReferenceKind.Person ? onCall.people.get(reference.name) : undefined;
        if (person !== undefined) return [person.number];
        // The balance watch reads no overrides: who is on call is for the routes' messages.
        problems.push(
          `balance.notify[${index}]: ${reference.kind === RecipientReferenceKind.Person ? `unknown person "${reference.name}"` : 'oncall: is not taken here; name a person (person:<name>) or a number'}`,
        );
        return [];
      }
      const normalised = normalizeRecipient(entry, numbering.defaultCountry);
      const noProvider = normalised.ok ? noProviderReason(numbering, normalised.number) : undefined;
      if (noProvider !== undefined) {
        problems.push(`balance.notify[${index}]: ${noProvider}`);
        return [];
      }
      if (normalised.ok) return [normalised.number];
      problems.push(`balance.notify[${index}]: ${normalised.reason}`);
      return [];
    });

  if (problems.length > 0) throw new ConfigError(source, problems);
  return { settings: config, routes, balanceNotify: [...new Set(balanceNotify)], onCall };
}

/**
 * The providers part of a config; a config staged before `providers:` existed has only `provider`,
 * which is one provider `main` of type sms-service.
 */
export function routingSettings(config: RelayConfig): RoutingSettings {
  return {
    providers: config.providers ?? { main: { type: ProviderType.SmsService } },
    routing: config.routing,
    failover: config.failover,
  };
}

/**
 * How the config reads its numbers: `defaultCountry` (a config staged before it existed: `TZ`)
 * and its providers (see `routingSettings`).
 */
export function numberingOf(config: RelayConfig): Numbering {
  return { defaultCountry: config.defaultCountry ?? DEFAULT_COUNTRY, routing: routingSettings(config) };
}

/**
 * A number written in the config that no provider texts would be DROPPED at every webhook, and a
 * person's or an escalation's number would never be paged: refused here, naming the entry (a
 * person's once, under `people`, not again at each step that names them).
 */
function literalsWithoutProvider(
  routes: ReadonlyMap<string, CompiledRoute>,
  onCall: OnCallDirectory,
  routing: ProviderRouting,
  problems: string[],
): void {
  const unrouted = (number: string) => routing.providersFor(`+${number}`).length === 0;
  const peoples = new Set<string>();
  for (const person of onCall.people.values()) {
    if (person.number === '') continue;
    peoples.add(person.number);
    if (unrouted(person.number))
      problems.push(`people.${person.name}.phone: no provider for +${maskMsisdn(person.number)}`);
  }
  for (const route of routes.values()) {
    route.recipientNumbers.forEach((numbers, index) => {
      for (const number of numbers ?? []) {
        if (!unrouted(number) || peoples.has(number)) continue;
        problems.push(`routes.${route.id}.recipients[${index}]: no provider for +${maskMsisdn(number)}`);
      }
    });
    route.paging?.steps.forEach((step, index) => {
      for (const entry of step.to.entries) {
        if (entry.kind !== RecipientEntryKind.Literal) continue;
        for (const number of entry.numbers) {
          if (!unrouted(number) || peoples.has(number)) continue;
          problems.push(`routes.${route.id}.escalate[${index}].to: no provider for +${maskMsisdn(number)}`);
        }
      }
    });
  }
}

/** A recipient template that reads the request's query string (`{{ query.to }}`). */
const READS_QUERY = /\bquery\b/;

/**
 * One template engine per time zone and currency, shared by the routes that use them; `checked`
 * for a config compiled before (see `createTemplateEngine`).
 */
export function engineCache({
  checked = false,
}: {
  readonly checked?: boolean;
} = {}): (route: RouteConfig) => TemplateEngine {
  const engines = new Map<string, TemplateEngine>();
  return (route) => {
    const key = `${route.timeZone}|${route.currency}`;
    let engine = engines.get(key);
    if (engine === undefined) {
      engine = createTemplateEngine({ timeZone: route.timeZone, currency: route.currency }, { checked });
      engines.set(key, engine);
    }
    return engine;
  };
}

/** Compiles one route, adding a problem per field that fails; `undefined` when any did. */
export function compileRoute(
  id: string,
  route: RouteConfig,
  engine: TemplateEngine,
  defaultSenderId: string | undefined,
  problems: string[],
  recipientNumbers?: ReadonlyArray<readonly string[] | null>,
  onCall: OnCallDirectory = NO_ONE,
  numbering?: Numbering,
): CompiledRoute | undefined {
  const pack = sourcePack(route.source);
  const at = (field: string): string => `routes.${id}.${field}`;
  const attempt = attemptFor(problems, at);

  const template = attempt('template', () => engine.compileTemplate(route.template ?? pack.defaultTemplate));
  const condition = route.when === undefined ? undefined : attempt('when', () => engine.compileCondition(route.when!));
  const allow =
    route.allowRecipients === undefined
      ? undefined
      : attempt('allowRecipients', () => compileAllowList(route.allowRecipients!, onCall, numbering));
  const recipients = attempt('recipients', () =>
    compileRecipients(route.recipients, engine, recipientNumbers, onCall, allow, numbering),
  );
  const bundles = route.digest !== undefined || route.quietHours !== undefined;
  // Compiled on every route: a route whose digest settings were removed still has DEFERRED records to send.
  const digestTemplate = attempt('digestTemplate', () =>
    engine.compileTemplate(route.digestTemplate ?? defaultDigestTemplate(pack.digestNoun)),
  );
  const pagingProblems = problems.length;
  const paging = compilePaging(id, route, engine, problems, onCall, numbering);
  if (
    template === undefined ||
    recipients === undefined ||
    (route.allowRecipients !== undefined && allow === undefined) ||
    (route.when !== undefined && condition === undefined) ||
    digestTemplate === undefined ||
    problems.length > pagingProblems
  )
    return undefined;
  if (bundles && recipients.entries.some((entry) => entry.kind === RecipientEntryKind.Template)) {
    problems.push(
      `${at('recipients')}: ${route.digest === undefined ? 'quietHours' : 'digest'} sends one SMS to the route's literal recipients; a templated recipient differs per webhook and cannot be merged into it`,
    );
    return undefined;
  }
  if (bundles && recipients.entries.some((entry) => entry.kind === RecipientEntryKind.OnCall)) {
    // The digest is sent by the sweeper, which does not read who is on call yet.
    problems.push(
      `${at('recipients')}: ${route.digest === undefined ? 'quietHours' : 'digest'} sends one SMS to the route's numbers and person: recipients; oncall: is not taken on such a route yet`,
    );
    return undefined;
  }
  const fromRequest = route.recipients.filter(
    (entry, index) =>
      recipients.entries[index]?.kind === RecipientEntryKind.Template &&
      (pack.recipientsFromRequest === true || READS_QUERY.test(entry)),
  );
  if (fromRequest.length > 0 && route.allowRecipients === undefined) {
    // A number taken from a request is chosen by whoever can call the URL: only listed ones are texted.
    problems.push(
      `${at('allowRecipients')}: required, since recipients take numbers from the request (${fromRequest.map(maskNumbersInText).join(', ')}); list who may be texted: person:*, numbers or a prefix like 2557*`,
    );
    return undefined;
  }
  const literals = new Set(
    recipients.entries.flatMap((entry) => (entry.kind === RecipientEntryKind.Literal ? entry.numbers : [])),
  );
  if (literals.size > route.maxRecipients) {
    problems.push(`${at('recipients')}: ${literals.size} numbers, more than maxRecipients (${route.maxRecipients})`);
    return undefined;
  }
  if (route.heartbeat !== undefined && literals.size === 0) {
    // Its SMS go out when no webhook came: there is no payload to render a templated recipient from.
    problems.push(
      `${at('heartbeat')}: needs at least one literal number in recipients (templated recipients come from a webhook, and the heartbeat's SMS is about webhooks not coming)`,
    );
    return undefined;
  }

  return {
    id,
    config: route,
    pack,
    engine,
    template,
    condition,
    recipients,
    digestTemplate,
    senderId: route.senderId ?? defaultSenderId,
    recipientNumbers: Object.freeze(
      recipients.entries.map((entry) => (entry.kind === RecipientEntryKind.Literal ? entry.numbers : null)),
    ),
    ...(paging === undefined ? {} : { paging }),
  };
}
