import { Liquid } from 'liquidjs';
import { z } from 'zod';
import { PROVIDER_TIMEOUT_MS } from '../defaults';
import { PROVIDER_RATE } from '../provider-rate';
import { AFRICASTALKING_BASE_URL } from '../provider/kinds/africastalking';
import { HTTP_ACCEPTED_DEFAULT } from '../provider/kinds/http';
import { DEFAULT_FAILOVER_ON, FAILOVER_REASONS, ProviderType } from '../provider/outcome';
import { isLoopbackHost } from './loopback';
import { typeCanCover } from './routing';
import { BalanceSchema, senderId } from './shared-schema';

const PROVIDER_TYPES = Object.values(ProviderType);
const timeoutMs = z.number().int().min(100).max(60_000).default(PROVIDER_TIMEOUT_MS);
const httpUrl = (field: string) => z.url({ protocol: /^https?$/, message: `${field} must be an http(s) URL` });
/** A Liquid template that parses; the same engine options the http type renders with. */
const template = z.string().superRefine((text, context) => {
  try {
    new Liquid({ strictFilters: true, templates: {} }).parse(text);
  } catch (error) {
    context.addIssue({
      code: 'custom',
      message: `not a valid Liquid template: ${(error as Error).message.split('\n')[0]}`,
    });
  }
});

/** `provider:` (one provider named `main`) and a `sms-service` entry of `providers:`. */
const smsServiceFields = {
  baseUrl: httpUrl('baseUrl'),
  defaultSenderId: senderId.optional(),
  timeoutMs,
  /**
   * The most SMS requests a second the service takes, held across every sender by a per-second
   * counter in the table; the sender's concurrency follows it. Absent: no limit but the
   * concurrency's (see `functions/core/provider-rate.ts`).
   */
  maxPerSecond: z.number().int().min(1).max(PROVIDER_RATE.maxPerSecond).optional(),
};

export const SmsServiceSchema = z.strictObject(smsServiceFields);

const ProviderEntrySchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({
      type: z.literal(ProviderType.SmsService),
      ...smsServiceFields,
      balance: BalanceSchema.optional(),
    }),
    z.strictObject({
      type: z.literal(ProviderType.AfricasTalking),
      username: z.string().min(1, { message: "username is the Africa's Talking account's username" }),
      senderId: senderId.optional(),
      baseUrl: httpUrl('baseUrl').default(AFRICASTALKING_BASE_URL),
      timeoutMs,
      balance: BalanceSchema.optional(),
    }),
    z.strictObject({
      type: z.literal(ProviderType.Http),
      url: httpUrl('url').refine(
        (url) => {
          const parsed = new URL(url);
          return parsed.protocol === 'https:' || isLoopbackHost(parsed.hostname);
        },
        { message: 'url must be https (http only to a loopback address, for a local stand-in)' },
      ),
      headers: z.record(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'a header name'), template).optional(),
      body: template.pipe(z.string().min(1, { message: 'body is the Liquid template of the JSON request body' })),
      accepted: z
        .array(z.number().int().min(200).max(299, { message: 'accepted statuses are 2xx: they mean sent' }))
        .min(1)
        .default([...HTTP_ACCEPTED_DEFAULT]),
      timeoutMs,
      balance: BalanceSchema.optional(),
    }),
  ],
  {
    error: (issue) =>
      issue.code === 'invalid_union' ? `unknown provider type; use one of ${PROVIDER_TYPES.join(', ')}` : undefined,
  },
);

/** Provider names become secret keys (`<name>-key`), metric dimensions and CLI output. */
const providerName = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, {
  message: 'provider names are lower-case letters, digits, - and _, starting with a letter',
});

export const ProvidersSchema = z.record(providerName, ProviderEntrySchema);

const e164Prefix = z
  .string()
  .regex(/^\+\d{1,15}$/, { message: 'a prefix is + and the first digits of E.164 numbers, like +255' });

export const RoutingSchema = z
  .array(
    z.strictObject({
      numbers: z.array(e164Prefix).min(1, { message: 'list at least one prefix, like +255' }),
      use: z.array(z.string().min(1)).min(1, { message: 'list the providers in failover order' }),
    }),
  )
  .min(1);

export const FailoverSchema = z.strictObject({
  on: z
    .array(z.enum(FAILOVER_REASONS, { message: `a failover reason is one of ${FAILOVER_REASONS.join(', ')}` }))
    .default([...DEFAULT_FAILOVER_ON]),
});

type ProvidersInput = {
  provider?: z.output<typeof SmsServiceSchema> | undefined;
  providers?: z.output<typeof ProvidersSchema> | undefined;
  routing?: z.output<typeof RoutingSchema> | undefined;
};

/**
 * The cross-checks of `provider`/`providers`/`routing`: one of the two provider keys, every name
 * in a `use` a provider, a prefix routed once, and no `sms-service` provider on a prefix it can
 * never text. Each problem names its key.
 */
export function checkProviders(config: ProvidersInput, context: z.RefinementCtx): void {
  if (config.provider !== undefined && config.providers !== undefined) {
    context.addIssue({
      code: 'custom',
      path: ['providers'],
      message: 'use either provider (one sms-service provider named main) or providers, not both',
    });
  }
  if (config.provider === undefined && config.providers === undefined) {
    context.addIssue({
      code: 'custom',
      path: ['providers'],
      message: 'is required (or provider, for one sms-service provider)',
    });
    return;
  }
  const providers: Readonly<Record<string, { type: ProviderType }>> = config.providers ?? {
    main: { type: ProviderType.SmsService },
  };
  const names = Object.keys(providers);
  if (names.length === 0)
    context.addIssue({ code: 'custom', path: ['providers'], message: 'list at least one provider' });
  const routedBy = new Map<string, number>();
  config.routing?.forEach(({ numbers, use }, index) => {
    numbers.forEach((prefix, prefixIndex) => {
      const earlier = routedBy.get(prefix);
      if (earlier !== undefined) {
        context.addIssue({
          code: 'custom',
          path: ['routing', index, 'numbers', prefixIndex],
          message: `${prefix} is routed already by routing[${earlier}]`,
        });
      } else routedBy.set(prefix, index);
    });
    use.forEach((name, useIndex) => {
      const provider = providers[name];
      const path = ['routing', index, 'use', useIndex];
      if (provider === undefined) {
        context.addIssue({
          code: 'custom',
          path,
          message: `unknown provider "${name}"; providers are ${names.join(', ')}`,
        });
      } else if (numbers.every((prefix) => !typeCanCover(provider.type, prefix))) {
        context.addIssue({
          code: 'custom',
          path,
          message: `${name} is of type sms-service, which texts +255 numbers only`,
        });
      }
    });
  });
}
