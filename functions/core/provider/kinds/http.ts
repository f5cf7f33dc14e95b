import type { Liquid, Template } from 'liquidjs';
import { NotSentReason, ProviderType, type SendOutcome, type SmsProvider } from '../outcome';
import { redactor } from '../transport';
import { SmsOperation } from '../types';
import { parseEndpoint } from '../validate';
import {
  createProviderTransport,
  failedExchangeOutcome,
  ProviderConfigError,
  type ProviderContext,
  uncertainCode,
} from './common';

/** `providers.<name>` of type `http`: any JSON-over-HTTP gateway. */
export interface HttpProviderConfig {
  readonly type: typeof ProviderType.Http;
  readonly url: string;
  /** Liquid per value: `to`, `text`, `secret.<name>`. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Liquid rendering the JSON body: `to` (E.164), `text`, `secret.<name>`. */
  readonly body: string;
  /** Statuses that mean sent. @default HTTP_ACCEPTED_DEFAULT */
  readonly accepted?: readonly number[] | undefined;
  readonly timeoutMs?: number | undefined;
}

export const HTTP_ACCEPTED_DEFAULT: readonly number[] = [200, 201, 202];

/**
 * 4xx statuses that do not prove the gateway did nothing: 408 (the gateway gave up reading, or a
 * proxy did, after it may have acted) and 429 (a proxy's limit may sit behind the gateway's work).
 */
const UNCERTAIN_4XX = new Set([408, 429]);

/** `secret.<name>` and `secret["<name>"]` in a template: the values of the provider secret it reads. */
const SECRET_REFERENCE = /\bsecret(?:\.([A-Za-z0-9_-]+)|\[\s*["']([^"']+)["']\s*\])/g;

/**
 * The names of the provider secret's values a template reads.
 *
 * @example
 * ```ts
 * secretNames('{{ secret.gateway-key }}'); // ['gateway-key']
 * ```
 */
export function secretNames(template: string): string[] {
  return [...template.matchAll(SECRET_REFERENCE)].map((match) => (match[1] ?? match[2])!);
}

/** The outcome a complete answer's status means (the http type has no body to read). */
export function httpStatusOutcome(status: number, accepted: readonly number[]): SendOutcome {
  if (accepted.includes(status)) return { status: 'sent' };
  const detail = `gateway answered HTTP ${status}`;
  if (status === 401 || status === 403) return { status: 'not-sent', reason: NotSentReason.RefusedKey, detail };
  if (status === 402) return { status: 'not-sent', reason: NotSentReason.InsufficientCredit, detail };
  if (status >= 400 && status <= 499 && !UNCERTAIN_4XX.has(status)) {
    return { status: 'not-sent', reason: NotSentReason.Rejected, detail };
  }
  return { status: 'maybe-sent', detail, code: uncertainCode(status) };
}

interface CompiledTemplates {
  readonly liquid: Liquid;
  readonly body: Template[];
  readonly headers: ReadonlyArray<readonly [string, Template[]]>;
}

/**
 * The `http` type: `POST <url>` with the Liquid-rendered JSON `body` and `headers`. A status in
 * `accepted` is sent; 401/403 a refused key, 402 no credit, another 4xx but 408 and 429 a
 * rejection (certainly not sent); anything else after the request left may have been sent.
 * LiquidJS is loaded at the first send, so a relay without this type never loads it.
 *
 * @throws ProviderConfigError when a template reads a secret value the secret does not have, or the URL is unusable
 */
export function createHttpProvider(name: string, config: HttpProviderConfig, context: ProviderContext): SmsProvider {
  const problems: string[] = [];
  const endpoint = parseEndpoint(config.url, 'url', problems);
  const headerTemplates = Object.entries(config.headers ?? {});
  const secrets: Record<string, string> = {};
  for (const secretName of [config.body, ...headerTemplates.map(([, value]) => value)].flatMap(secretNames)) {
    const value = context.secret(secretName);
    if (value === undefined) problems.push(`the provider secret has no ${secretName}`);
    else secrets[secretName] = value;
  }
  if (problems.length > 0 || endpoint === undefined) throw new ProviderConfigError(name, problems);
  const redact = redactor(Object.values(secrets));
  const transport = createProviderTransport(endpoint, { timeoutMs: config.timeoutMs, context, redact });
  const accepted = config.accepted ?? HTTP_ACCEPTED_DEFAULT;
  let compiled: Promise<CompiledTemplates> | undefined;
  const templates = (): Promise<CompiledTemplates> => {
    compiled ??= import('liquidjs').then(({ Liquid }) => {
      const liquid = new Liquid({ strictVariables: true, strictFilters: true, ownPropertyOnly: true, templates: {} });
      return {
        liquid,
        body: liquid.parse(config.body),
        headers: headerTemplates.map(([header, value]) => [header, liquid.parse(value)] as const),
      };
    });
    return compiled;
  };

  return Object.freeze<SmsProvider>({
    name,
    type: ProviderType.Http,
    covers: (e164: string) => /^\+\d{8,15}$/.test(e164),
    async send(sms, options): Promise<SendOutcome> {
      let body: string;
      const headers: Record<string, string> = {};
      try {
        const { liquid, body: bodyTemplate, headers: headerList } = await templates();
        const scope = { to: sms.to, text: sms.text, senderId: sms.senderId ?? '', secret: secrets };
        body = await liquid.render(bodyTemplate, scope);
        JSON.parse(body);
        for (const [header, template] of headerList) headers[header] = await liquid.render(template, scope);
      } catch (error) {
        // The request was never sent: a template or its JSON is broken, which no retry cures.
        const what = error instanceof SyntaxError ? 'is not JSON once rendered' : 'does not render';
        return { status: 'not-sent', reason: NotSentReason.Rejected, detail: `${name}: the body or a header ${what}` };
      }
      try {
        // The URL is the whole address: its path is the exchange's prefix.
        const path = endpoint.pathPrefix === '' ? '/' : '';
        const raw = await transport.call(
          { operation: SmsOperation.SEND, method: 'POST', path, body, headers },
          options,
        );
        return httpStatusOutcome(raw.status, accepted);
      } catch (error) {
        return failedExchangeOutcome(error);
      }
    },
    close: () => transport.close(),
  });
}
