import { createPublicKey } from 'node:crypto';
import { z } from 'zod';
import { SOURCE_NAMES, SOURCES, type SourceName } from '../sources/registry';
import {
  DEFAULT_CURRENCY,
  DEFAULT_TIME_ZONE,
  DEFAULT_MAX_RECIPIENTS,
  DEFAULT_RETRY_FOR_SECONDS,
  MAX_RETRY_FOR_SECONDS,
  HEARTBEAT,
  DEFAULT_RETENTION_DAYS,
  HANDLER_TIMEOUT_SECONDS,
  MAX_RECIPIENTS_CEILING,
} from '../defaults';
import { parseDurationSeconds } from './duration';
import { WEEKDAYS } from '../windows';
import { checkHmacSettings, HmacDedupeSchema, HmacSignatureSchema, HmacTimestampSchema } from './hmac-schema';
import { PeopleSchema, SchedulesSchema } from './oncall-schema';
import { AckSchema, EscalateSchema, IncidentSchema, RenotifySchema } from './paging-schema';
import { AlarmsSchema } from './alarms-schema';
import { BalanceSchema, senderId } from './shared-schema';
import { checkProviders, FailoverSchema, ProvidersSchema, RoutingSchema, SmsServiceSchema } from './providers-schema';
import { DEFAULT_FAILOVER_ON, ProviderType } from '../provider/outcome';
import { DEFAULT_COUNTRY, isKnownCountry } from '../recipients/e164';
import { TimeZoneSchema } from './zone-schema';
import { DeliveryPolicy, LengthPolicy, RoutePriority } from './policies';
import { DEFAULT_MAX_PARTS, MAX_PARTS_CEILING } from '../fitting/constants';

// Defined in a module without zod, so the Lambda handlers can use them without the schema.
export { DeliveryPolicy, LengthPolicy, RoutePriority } from './policies';

const duration = z.union([z.number(), z.string()]).transform((value, context) => {
  const seconds = parseDurationSeconds(value);
  if (seconds === undefined) {
    context.addIssue({ code: 'custom', message: `"${value}" is not a duration; use seconds or e.g. 30s, 5m, 1h, 3d` });
    return z.NEVER;
  }
  return seconds;
});

function isEcPublicKey(pem: string): boolean {
  try {
    return createPublicKey(pem).asymmetricKeyType === 'ec';
  } catch {
    return false;
  }
}

/** An SNS topic ARN in any partition (aws, aws-cn, aws-us-gov, the ISO ones, aws-eusc). */
const SNS_TOPIC_ARN =
  /^arn:aws(?:-[a-z]+){0,2}:sns:[a-z]{2,4}(?:-[a-z]+)+-\d{1,2}:\d{12}:[A-Za-z0-9_-]{1,256}(?:\.fifo)?$/;

const clock = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, { message: 'a time of day is HH:MM, 00:00 to 23:59' });

const QuietHoursSchema = z
  .strictObject({
    from: clock,
    to: clock,
    /** The days a quiet period starts on (22:00 Friday to 07:00 Saturday is Friday's); absent: every day. */
    days: z
      .array(z.enum(WEEKDAYS, { message: `a day is one of ${WEEKDAYS.join(', ')}` }))
      .min(1)
      .default([...WEEKDAYS]),
  })
  .refine((quiet) => quiet.from !== quiet.to, {
    message: 'from and to are the same time: quiet hours need a length',
    path: ['to'],
  });

/**
 * What must wake people goes to a critical route, so a critical route has no quiet hours; a digest
 * needs something to bundle after its template.
 */
function checkWindows(
  route: { priority?: string; quietHours?: unknown; digestTemplate?: string | undefined; digest?: unknown },
  context: z.RefinementCtx,
): void {
  if (route.priority === RoutePriority.Critical && route.quietHours !== undefined) {
    context.addIssue({
      code: 'custom',
      path: ['quietHours'],
      message: 'a critical route is never quiet: remove quietHours, or send what can wait to another route',
    });
  }
  if (route.digestTemplate !== undefined && route.digest === undefined && route.quietHours === undefined) {
    context.addIssue({
      code: 'custom',
      path: ['digestTemplate'],
      message: 'digestTemplate applies to routes with digest or quietHours',
    });
  }
}

export const RouteSchema = z
  .strictObject({
    source: z.enum(SOURCE_NAMES, { message: `unknown source; use one of ${SOURCE_NAMES.join(', ')}` }),
    secret: z
      .string()
      .min(1, { message: 'name the value inside the environment secret that authenticates this route' }),
    recipients: z.array(z.string().min(1)).min(1, { message: 'at least one recipient is required' }),
    when: z.string().min(1).optional(),
    template: z.string().min(1).optional(),
    senderId: senderId.optional(),
    fanOut: z
      .string()
      .regex(/^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*$/, { message: 'fanOut is a dotted path to an array, like "alerts"' })
      .optional(),
    length: z.enum(Object.values(LengthPolicy)).default(LengthPolicy.Truncate),
    maxParts: z.number().int().min(1).max(MAX_PARTS_CEILING).default(DEFAULT_MAX_PARTS),
    dedupeWindow: duration.optional(),
    /** How long each authenticated payload of the route is kept (body and an allow-list of headers, see `capturedHeaderNames`) for the console. */
    capture: duration.optional(),
    /** Absent: by source, see {@link defaultDelivery}. */
    delivery: z.enum(Object.values(DeliveryPolicy)).optional(),
    /**
     * At-least-once routes: `for` is how long after acceptance a message is retried (backoff capped
     * at `RETRY.maxDelayMs`) before it ends UNKNOWN (may have been sent) or FAILED. Absent: 1 h.
     */
    retry: z
      .strictObject({
        for: duration.default(DEFAULT_RETRY_FOR_SECONDS).refine((seconds) => seconds <= MAX_RETRY_FOR_SECONDS, {
          message: `for is at most ${MAX_RETRY_FOR_SECONDS / 86_400}d`,
        }),
      })
      .optional(),
    maxRecipients: z.number().int().min(1).max(MAX_RECIPIENTS_CEILING).default(DEFAULT_MAX_RECIPIENTS),
    priority: z.enum(Object.values(RoutePriority)).default(RoutePriority.Normal),
    limits: z
      .strictObject({
        messages: z.number().int().positive().optional(),
        window: duration.default(3600),
        creditsPerDay: z.number().positive().optional(),
        /** Credits per calendar month in the route's `timeZone`, held like `creditsPerDay`. */
        creditsPerMonth: z.number().positive().optional(),
      })
      .optional(),
    /**
     * The dead-man's switch: one SMS to the route's literal recipients when no authenticated webhook
     * arrived for `every + grace`, one more when they resume.
     */
    heartbeat: z
      .strictObject({
        every: z
          .union([z.number(), z.string()], { error: 'every is how often webhooks are expected, e.g. 5m' })
          .pipe(duration)
          .refine((seconds) => seconds >= HEARTBEAT.minSeconds, {
            message: `every is at least ${HEARTBEAT.minSeconds / 60}m: the sweeper checks once a minute`,
          }),
        grace: duration
          .refine((seconds) => seconds >= HEARTBEAT.minSeconds, {
            message: `grace is at least ${HEARTBEAT.minSeconds / 60}m: the sweeper checks once a minute`,
          })
          .default(HEARTBEAT.graceSeconds),
      })
      .optional(),
    /** Messages accepted in these hours (the route's `timeZone`) wait for one digest SMS at their end. */
    quietHours: QuietHoursSchema.optional(),
    /** Bundles the route's messages: the first opens a window, one digest SMS goes out at its end. */
    digest: z.strictObject({ window: duration }).optional(),
    /** The digest SMS (Liquid: `count`, `messages`, `first`, `last`, `route`, `window`); absent: the source's default (see `defaultDigestTemplate`). */
    digestTemplate: z.string().min(1).optional(),
    timeZone: TimeZoneSchema.default(DEFAULT_TIME_ZONE),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, { message: 'currency is an ISO 4217 code like TZS' })
      .default(DEFAULT_CURRENCY),
    toleranceSeconds: z.number().int().positive().max(86_400).default(300),
    // source: hmac only (see hmac-schema.ts)
    signature: HmacSignatureSchema.optional(),
    timestamp: HmacTimestampSchema.optional(),
    dedupe: HmacDedupeSchema.optional(),
    /** `sns` routes: the topic ARNs whose messages the route accepts (required there, refused elsewhere). */
    topics: z
      .array(
        z.string().regex(SNS_TOPIC_ARN, {
          message: 'a topic is an SNS topic ARN like arn:aws:sns:eu-west-1:123456789012:alarms',
        }),
      )
      .min(1)
      .optional(),
    /**
     * The numbers a templated recipient (a number from the request: `{{ query.to }}`,
     * `{{ event.user.phone }}`) may be: `person:*`, `person:<name>`, numbers, prefixes like `2557*`.
     * Required on a route whose templated recipients read `query`, or whose source calls one URL per
     * person (`goalert`, `grafana-oncall`). See docs/oncall-tools.md.
     */
    allowRecipients: z
      .array(z.string().min(1))
      .min(1, { message: 'list at least one entry: person:*, a number or a prefix like 2557*' })
      .optional(),
    /** `goalert` routes: GoAlert's webhook public key (PEM); set, every webhook must carry a valid `X-Webhook-Signature`. */
    publicKey: z
      .string()
      .refine(isEcPublicKey, {
        message:
          'publicKey is a PEM public key (-----BEGIN PUBLIC KEY-----), the EC key GoAlert signs its webhooks with',
      })
      .optional(),
    /** Paging: who is told next while the incident is neither acknowledged nor resolved (`[{ after, to }]`). */
    escalate: EscalateSchema.optional(),
    /** Paging: repeat to the last level reached, `every` apart, at most `max` times. */
    renotify: RenotifySchema.optional(),
    /** Paging: every SMS of an incident ends with an acknowledge link on this origin. */
    ack: AckSchema.optional(),
    /** Paging: how a webhook names its incident and says it resolved; absent: the source's default, if it has one. */
    incident: IncidentSchema.optional(),
  })
  .superRefine(checkHmacSettings)
  .superRefine(checkWindows)
  .transform((route, context) => {
    const delivery = route.delivery ?? defaultDelivery(route.source);
    if (route.retry !== undefined && delivery !== DeliveryPolicy.AtLeastOnce) {
      context.addIssue({
        code: 'custom',
        path: ['retry'],
        message: `retry applies to at-least-once routes; this route is ${delivery} (an ambiguous failure is never retried): remove retry, or set delivery: at-least-once`,
      });
    }
    return { ...route, delivery };
  });

/**
 * A route's `delivery` when it sets none: its source pack's `defaultDelivery` (`at-least-once` for
 * alerting sources, `at-most-once` for order, payment, code-hosting and generic sources).
 *
 * @example
 * ```ts
 * defaultDelivery('alertmanager'); // 'at-least-once'
 * defaultDelivery('shopify'); // 'at-most-once'
 * ```
 */
export function defaultDelivery(source: SourceName): DeliveryPolicy {
  return SOURCES[source].defaultDelivery;
}

type FunctionName = keyof typeof HANDLER_TIMEOUT_SECONDS;
const FUNCTION_NAMES = Object.keys(HANDLER_TIMEOUT_SECONDS) as FunctionName[];

/** The retention periods CloudWatch Logs accepts, in days. */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

/** A value of the deploy block, checked by `accepts`; one message however it is wrong. */
const deployValue = <T>(accepts: (value: unknown) => value is T, message: string) =>
  z.custom<T>(accepts, { message }).optional();
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * Per-environment stack settings, read by `cdk synth` only (the local runtime ignores them). Every
 * key is optional; absent keys keep the stack's defaults.
 */
export const DeploySchema = z.strictObject({
  throttle: z
    .strictObject({
      rate: deployValue(
        (value): value is number => isNumber(value) && value > 0,
        'rate is requests per second, above 0',
      ),
      burst: deployValue(
        (value): value is number => isNumber(value) && Number.isInteger(value) && value >= 0,
        'burst is a whole number of requests, 0 or more',
      ),
    })
    .optional(),
  memory: z
    .strictObject(
      Object.fromEntries(
        FUNCTION_NAMES.map((name) => [
          name,
          deployValue(
            (value): value is number => isNumber(value) && Number.isInteger(value) && value >= 128 && value <= 10_240,
            'memory is whole MB from 128 to 10240',
          ),
        ]),
      ) as Record<FunctionName, ReturnType<typeof deployValue<number>>>,
    )
    .optional(),
  logRetentionDays: deployValue(
    (value): value is number => (LOG_RETENTION_DAYS as readonly unknown[]).includes(value),
    `CloudWatch keeps logs for one of ${LOG_RETENTION_DAYS.join(', ')} days`,
  ),
  /**
   * The sender's reserved concurrency: kept for it whatever else runs in the account (another
   * environment's stack included), and the most sends it runs at once. Unset: none reserved.
   */
  senderConcurrency: deployValue(
    (value): value is number => isNumber(value) && Number.isInteger(value) && value >= 1 && value <= 1_000,
    'senderConcurrency is a whole number of concurrent sender invocations from 1 to 1000',
  ),
  /**
   * Resources the stack uses instead of creating them: after `cdk destroy` (which keeps the table
   * and the two secrets) a redeploy of the same environment adopts them, so its limit counters,
   * dedupe guards and records carry on; a point-in-time restore is adopted the same way.
   */
  adopt: z
    .strictObject({
      table: z
        .strictObject({
          /** The existing table's name: the retained one (the stack's old `TableName` output) or a restore. */
          name: z.string().regex(/^[A-Za-z0-9_.-]{3,255}$/, 'a DynamoDB table name: 3-255 letters, digits, _ . or -'),
          /**
           * Its stream (`aws dynamodb describe-table --query Table.LatestStreamArn`): the sender is fed
           * by it. A restored table has none until `update-table --stream-specification` enables one.
           */
          streamArn: z
            .string()
            .regex(
              /^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table\/[A-Za-z0-9_.-]{3,255}\/stream\/.+$/,
              'the table stream ARN, arn:aws:dynamodb:<region>:<account>:table/<name>/stream/<label>',
            ),
        })
        .refine((table) => table.streamArn.split(':table/')[1]?.split('/stream/')[0] === table.name, {
          message: 'streamArn must be the stream of the table named in name',
          path: ['streamArn'],
        })
        .optional(),
      /** The two named secrets (`secrets` and `<secrets>/provider`) exist: use them, values and all. */
      secrets: deployValue((value): value is boolean => typeof value === 'boolean', 'secrets is true or false'),
    })
    .optional(),
  /** What deleting the stack does to the table and the secrets. */
  onDelete: deployValue(
    (value): value is 'retain' | 'destroy' => value === 'retain' || value === 'destroy',
    'onDelete is retain (the default) or destroy',
  ),
  /**
   * Deploy routes that set `capture`: they store customer payloads in the deployed table, so it is
   * a choice made here, never a setting copied from the local example.
   */
  allowCapture: deployValue((value): value is boolean => typeof value === 'boolean', 'allowCapture is true or false'),
});

/**
 * An `sns` route must name its topics: a valid SNS signature only proves that some topic, in any
 * AWS account, sent the message. Other sources have no topics; only `goalert` routes take a `publicKey`.
 */
function checkSourceSettings(routes: Record<string, z.output<typeof RouteSchema>>, context: z.RefinementCtx): void {
  for (const [id, route] of Object.entries(routes)) {
    if (route.source === 'sns' && route.topics === undefined) {
      context.addIssue({
        code: 'custom',
        path: [id, 'topics'],
        message: 'an sns route lists the topic ARNs it accepts: topics: [arn:aws:sns:<region>:<account>:<topic>]',
      });
    } else if (route.source !== 'sns' && route.topics !== undefined) {
      context.addIssue({ code: 'custom', path: [id, 'topics'], message: 'topics applies to sns routes only' });
    }
    if (route.source !== 'goalert' && route.publicKey !== undefined) {
      context.addIssue({
        code: 'custom',
        path: [id, 'publicKey'],
        message: 'publicKey applies to goalert routes only',
      });
    }
  }
}

export const ConfigSchema = z
  .strictObject({
    /** One provider named `main` of type `sms-service`; `providers:` lists several instead. */
    provider: SmsServiceSchema.optional(),
    /** The providers, in failover order where no routing says otherwise (docs/providers.md). */
    providers: ProvidersSchema.optional(),
    /** E.164 prefixes → the providers that text them, in failover order; absent: every provider, in order. */
    routing: RoutingSchema.optional(),
    /** The not-sent reasons that move a send to the next provider. */
    failover: FailoverSchema.default({ on: [...DEFAULT_FAILOVER_ON] }),
    /** The country of recipients written without a country code (ISO 3166-1 alpha-2). */
    defaultCountry: z
      .string()
      .refine(isKnownCountry, { message: 'defaultCountry is a two-letter country code like TZ or KE' })
      .default(DEFAULT_COUNTRY),
    /** The Secrets Manager secret's name; absent: `sms-relay/<env>` (see `defaultSecretName`). */
    secrets: z.string().min(1).optional(),
    deploy: DeploySchema.optional(),
    balance: BalanceSchema.optional(),
    /** Who the deployed alarms reach, by kind (`page`, `ticket`), and the critical routes' latency promise; see alarms-schema.ts. */
    alarms: AlarmsSchema.optional(),
    retentionDays: z.number().int().min(1).max(3650).default(DEFAULT_RETENTION_DAYS),
    routes: z
      .record(
        z
          .string()
          .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, { message: 'route ids are lower-case letters, digits, - and _' }),
        RouteSchema,
      )
      .refine((routes) => Object.keys(routes).length > 0, { message: 'at least one route is required' })
      .superRefine(checkSourceSettings),
    /** Who can be paged by name (`person:<name>`): `name: { phone }`. */
    people: PeopleSchema.optional(),
    /** Rotations (`oncall:<schedule>`): `name: { timezone, rotation: { people, every, start }, notifyHandoff }`. */
    schedules: SchedulesSchema.optional(),
  })
  .superRefine(checkProviders)
  .transform(withProviders);

type ProviderEntry = z.output<typeof ProvidersSchema>[string];

/**
 * The compatibility view of the first provider, as `provider` held it before `providers:` existed:
 * what the code that sends through one provider reads until it reads `providers`.
 */
function firstProviderSettings(entry: ProviderEntry): z.output<typeof SmsServiceSchema> {
  if (entry.type === ProviderType.SmsService) {
    const { type: _type, balance: _balance, ...settings } = entry;
    return settings;
  }
  if (entry.type === ProviderType.AfricasTalking) {
    return { baseUrl: entry.baseUrl, defaultSenderId: entry.senderId, timeoutMs: entry.timeoutMs };
  }
  return { baseUrl: entry.url, timeoutMs: entry.timeoutMs };
}

/**
 * Both views of the providers, whichever key the config wrote: `providers` (`provider:` alone is
 * one provider `main` of type `sms-service`) and `provider`, the first provider's settings.
 */
function withProviders<
  T extends {
    provider?: z.output<typeof SmsServiceSchema> | undefined;
    providers?: Record<string, ProviderEntry> | undefined;
  },
>(
  config: T,
): Omit<T, 'provider' | 'providers'> & {
  provider: z.output<typeof SmsServiceSchema>;
  providers: Record<string, ProviderEntry>;
} {
  const providers: Record<string, ProviderEntry> = config.providers ?? {
    main: { type: ProviderType.SmsService, ...config.provider! },
  };
  const first = Object.values(providers)[0]!;
  return { ...config, provider: config.provider ?? firstProviderSettings(first), providers };
}

export type RelayConfigInput = z.input<typeof ConfigSchema>;
export type RelayConfig = z.output<typeof ConfigSchema>;
/** A config written with `provider:` (one sms-service provider named `main`), as most tests write it. */
export type SingleProviderConfigInput = RelayConfigInput & { provider: NonNullable<RelayConfigInput['provider']> };
export type RouteConfig = z.output<typeof RouteSchema>;
export type DeployConfig = z.output<typeof DeploySchema>;
