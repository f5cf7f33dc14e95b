/**
 * The console's JSON API: what `/console/api/*` answers and what the page reads. {@link CONSOLE_API}
 * is its route map: each endpoint (`METHOD /path`, `:id` a path parameter) with the zod schemas of
 * its request and the type of its answer. The server (`api.ts`) dispatches from it and the page's
 * client (`client/api.ts`) takes its paths, requests and answers from it, so neither can ask for or
 * answer something the other does not know. The server builds the answers from the store's records
 * (`local/records`) and the core's evaluation; there is no second model of a record. Phone numbers
 * are masked (`2557****678`) in every value; no secret value ever appears. Errors are
 * `{ "error": "…" }` with a 4xx/5xx status.
 *
 * Every request carries the session cookie set by the one-time link (see `access.ts`) and the
 * header {@link CONSOLE_REQUEST_HEADER} with the tab's page token; every POST also carries
 * `content-type: application/json`.
 *
 * Only zod and pure modules are imported here: the page imports this file's types.
 */
import type { CircuitChange, CircuitView } from '../records/circuit-contract';
import { z } from 'zod';
import {
  answers,
  type AnswerOfRoute,
  type RouteCall,
  type RouteMap,
  type RouteRequest,
  type RouteSpec,
} from '../http/route-map';
import { MAX_BODY_BYTES, MAX_MUTE_REASON_CHARS, ONCALL } from '../../functions/core/defaults';
import {
  DismissRecordRequest,
  RecordIdParameters,
  RecordsPageQuery,
  RedriveRecordRequest,
  RedriveRequest,
  wholeNumber,
  type DismissAnswer,
  type RecordsPage,
  type RecordView,
  type RedriveAnswer,
  type RequeueOutcome,
  type State,
} from '../records/contract';

export type { DismissAnswer, RecordsPage, RedriveAnswer, RequeueOutcome, State };

/**
 * The header of every API request from the page, with the tab's page token (see `ConsoleSession`
 * in `access.ts`): the session cookie reaches every port of 127.0.0.1, the token only this page.
 * A page of another site cannot add a custom header to a request here without a CORS preflight,
 * which this server never approves, and a form cannot add one at all.
 */
export const CONSOLE_REQUEST_HEADER = 'x-sms-relay-console';

/** The fragment the sign-in page moves on with (`/console#session=<page token>`): the page takes its token from it. */
export const PAGE_TOKEN_FRAGMENT = 'session=';

/** Where the page keeps its token: `sessionStorage` is this origin's (port included) and this tab's alone. */
export const PAGE_TOKEN_KEY = 'sms-relay-console-page-token';

/** A record as a row of Activity, the same view `sms-relay logs --json` prints. */
export type RecordRow = RecordView;

export interface Overview {
  /** Where the records come from, e.g. "the running relay (pid 4242, http://127.0.0.1:3000)". */
  readonly source: string;
  /** `local` or the `--env` name. */
  readonly environment: string;
  readonly routes: readonly {
    readonly id: string;
    readonly source: string;
    /** The route's template, or its source's default: where the playground starts. */
    readonly template: string;
    readonly when: string | null;
    /** As written in the config, numbers masked. */
    readonly recipients: readonly string[];
  }[];
  readonly states: readonly State[];
  /** States a record can be redriven from: PARKED, FAILED, HELD, and UNKNOWN once duplicates are accepted. */
  readonly redriveStates: readonly State[];
  readonly currency: string;
}

/**
 * The SMS service as the relay sees it (`GET /service`, polled by the console's header): while its
 * circuit is open, since when and how many messages wait PENDING for it.
 */
export interface ServiceStatus {
  /** When sends were paused because the service stopped answering; `null` while it answers. */
  readonly unreachableSince: string | null;
  /** PENDING records waiting to be sent (counted only while unreachable; 0 otherwise). */
  readonly waiting: number;
  /** The last failure (`server-error 503`, `refused`, `timeout`…), while unreachable. */
  readonly lastError: string | null;
  /** The whole circuit, as `sms-relay circuit --json` shows it (closed, on probation or open). */
  readonly circuit: CircuitView;
  /** When the next probe of the balance endpoint may start, while unreachable. */
  readonly nextProbeAt: string | null;
}

export interface StateChange {
  readonly at: string;
  readonly state: State;
  readonly reason?: string;
  /** The provider of the attempt whose outcome this change records. */
  readonly provider?: string;
}

export interface AttemptError {
  readonly at: string;
  readonly name: string;
  readonly status?: number;
  /** `not-sent` | `maybe-sent` … */
  readonly delivery?: string;
  readonly message: string;
  /** The provider the attempt went to, when the record kept it. */
  readonly provider?: string;
}

export interface CapturedPayloadView {
  readonly id: string;
  readonly route: string;
  readonly receivedAt: string;
  /** Only the route's allowed headers (see `capturedHeaderNames`), numbers masked in their values. */
  readonly headers: Readonly<Record<string, string>>;
  /** Numbers masked. */
  readonly body: string;
  readonly bodyEncoding: 'utf8' | 'base64';
  readonly recordIds: readonly string[];
}

export interface RecordDetail {
  readonly record: RecordRow;
  readonly sms: {
    /** Numbers in it masked. */
    readonly text: string;
    readonly encoding: string;
    readonly characters: number;
    readonly segments: number;
    readonly part: number;
    readonly parts: number;
    readonly index: number;
    readonly senderId: string | null;
    readonly delivery: string;
    readonly notice: string | null;
  };
  /** Every state change with its time, oldest first, but for those in `historyOmitted`. */
  readonly history: readonly StateChange[];
  /**
   * The state changes the record no longer keeps (its history keeps the first and the last ones):
   * how many, and how many entries of `history` come before them; `null` when none were left out.
   */
  readonly historyOmitted: { readonly count: number; readonly after: number } | null;
  /** The SMS service's answer to the send, when it was accepted. */
  readonly result: {
    readonly deducted: number;
    readonly remainingBalance: number | null;
    readonly message: string;
    readonly senderId: string;
    readonly sentAt: string | null;
  } | null;
  /** The error of each failed attempt, oldest first. */
  readonly errors: readonly AttemptError[];
  /** The webhook as received, when the route captures payloads and it is still kept. */
  readonly capture: CapturedPayloadView | null;
  readonly redrivable: boolean;
  /** Whether it can be dismissed (ended unsent): UNKNOWN, FAILED, HELD and PARKED records. */
  readonly dismissible: boolean;
  /**
   * Why a redrive of this record may send a duplicate (an UNKNOWN record may already have arrived):
   * the page shows it and asks before sending `acceptDuplicates: true`. `null` when there is no such risk.
   */
  readonly redriveWarning: string | null;
  /**
   * A digest's links: on a DIGESTED record the digest that carried it (`id`); on a digest record the
   * DEFERRED records it stands for (`of`, oldest first). `null` on other records.
   */
  readonly digest: { readonly id: string | null; readonly of: readonly string[] } | null;
  /** The incident the SMS belongs to, with its story; `null` for an SMS of no incident. */
  readonly incident: IncidentView | null;
}

/**
 * The incident a record's SMS belongs to (an escalation's, or any SMS carrying an acknowledge link),
 * told as a story: `sent to asha (2557****678)`, `escalated to baraka (2557****111)`,
 * `acknowledged by baraka (2557****111) via link`. Numbers masked; people named from the config.
 */
export interface IncidentView {
  readonly id: string;
  readonly route: string;
  /** `OPEN`, `ACKNOWLEDGED` or `RESOLVED`. */
  readonly state: string;
  readonly openedAt: string;
  /** The level reached: 0 the route's recipients, n the n-th escalation step. */
  readonly level: number;
  readonly nextDueAt: string | null;
  readonly closedAt: string | null;
  /** The alert's first SMS as sent (numbers masked). */
  readonly text: string;
  readonly story: readonly {
    readonly at: string;
    /** `at` on the route's clock: `14:02`, with the date when not today. */
    readonly atLocal: string;
    readonly event: string;
    /** `sent to asha (2557****678)`. */
    readonly line: string;
    /** The states of the SMS this step sent (`SENT`, `PARKED`, `DROPPED`…); empty for a step that sent none. */
    readonly states: readonly State[];
  }[];
  readonly timeZone: string;
}

/** `GET /oncall`: each schedule, who is on call now and until when, the overrides and the next handoffs. */
export interface OnCallAnswer {
  readonly schedules: readonly ScheduleView[];
}

/** A person on call: the config's name and the number, masked. */
export interface OnCallPerson {
  readonly name: string;
  readonly number: string;
}

export interface ScheduleView {
  readonly name: string;
  readonly timeZone: string;
  /** The rotation's people, in turn order (names). */
  readonly rotation: readonly string[];
  /** Seconds a shift lasts. */
  readonly every: number;
  readonly notifyHandoff: boolean;
  /** Who is on call now; `null` when the rotation names nobody. */
  readonly now: {
    readonly person: OnCallPerson;
    /** `null`: until further notice (nobody else is ever on call). */
    readonly until: string | null;
    readonly untilLocal: string | null;
    /** The override that put them on call, if one did. */
    readonly override: { readonly reason: string; readonly until: string } | null;
  } | null;
  /** The overrides in force now or later, oldest first. */
  readonly overrides: readonly {
    readonly person: OnCallPerson;
    readonly from: string;
    readonly until: string;
    readonly fromLocal: string;
    readonly untilLocal: string;
    readonly reason: string;
  }[];
  /** The next handoffs (rotation and overrides), soonest first. */
  readonly handoffs: readonly { readonly at: string; readonly atLocal: string; readonly person: OnCallPerson }[];
}

export interface LimitUse {
  /** `credits`: today (UTC); `month`: the calendar month in the route's time zone. */
  readonly kind: 'messages' | 'credits' | 'month';
  /** Messages in the current window, or credits reserved today (this month). */
  readonly used: number;
  readonly max: number;
  /** Credits actually spent today (credits limit only). */
  readonly spent?: number;
  readonly windowEndsAt: string;
}

export interface RouteSummary {
  readonly id: string;
  readonly source: string;
  readonly webhookUrl: string;
  readonly priority: string;
  readonly delivery: string;
  readonly maxRecipients: number;
  /** Seconds a payload is kept, or null when the route does not capture. */
  readonly captureSeconds: number | null;
  readonly lastWebhookAt: string | null;
  /** Records created in the last 24 hours, by state. */
  readonly last24h: Readonly<Partial<Record<State, number>>>;
  readonly limits: readonly LimitUse[];
  /** The mute in force (`sms-relay mute`, the card's Mute button), or null. */
  readonly mute: MuteView | null;
  /** The route's dead-man's switch, or null when it has no `heartbeat`. */
  readonly heartbeat: {
    readonly every: number;
    readonly grace: number;
    /** The last authenticated webhook, to within a minute; null before the first. */
    readonly lastSeenAt: string | null;
    /** Set while the route is reported silent: its last webhook before the silence. */
    readonly silentSince: string | null;
  } | null;
  /** `quietHours` as configured (e.g. `22:00–07:00 mon tue`, in `timeZone`), or null. */
  readonly quietHours: string | null;
  /** The digest window in seconds, or null when the route sends each message on its own. */
  readonly digestSeconds: number | null;
  readonly timeZone: string;
}

export interface MuteView {
  readonly until: string;
  readonly reason: string;
  /** `until` as the dropped records say it: `14:30` in the route's time zone. */
  readonly untilLocal: string;
  readonly timeZone: string;
}

/** `POST /routes/<id>/mute` `{for: "2h", reason}` and `POST /routes/<id>/unmute`: the route's mute after it. */
export interface MuteAnswer {
  readonly route: string;
  readonly mute: MuteView | null;
}

export interface RoutesAnswer {
  readonly routes: readonly RouteSummary[];
}

export interface BalancePoint {
  readonly at: string;
  readonly balance: number;
  /** A send's `remainingBalance`, or a balance read. */
  readonly kind: 'send' | 'read';
}

export interface CreditAnswer {
  readonly currency: string;
  /** The newest balance the relay learned: a send's answer, a balance read, the read after an insufficient-balance answer. */
  readonly balance: number | null;
  readonly balanceAt: string | null;
  readonly threshold: number | null;
  readonly reserve: number | null;
  /** Oldest first. */
  readonly points: readonly BalancePoint[];
  /** Credits per route per UTC day, oldest day first. */
  readonly spend: readonly { readonly day: string; readonly route: string; readonly credits: number }[];
  readonly forecast: {
    readonly daysLeft: number | null;
    /** Credits spent in the days looked back on. */
    readonly spent: number;
    /** Days looked back on (at most 7, less when the relay has been observed for less). */
    readonly days: number;
    readonly perDay: number | null;
    readonly firstObservedAt: string | null;
    /** One sentence: what the forecast rests on, or why there is none. */
    readonly basis: string;
  };
  /** Price of one SMS to one recipient, when known. */
  readonly creditsPerUnit: number | null;
  /** SMS parked now, counted in one page of the state index (`more`: others beyond it). */
  readonly parked: { readonly count: number; readonly more: boolean };
}

export interface PayloadChoice {
  readonly kind: 'capture' | 'fixture';
  /** A capture id or a fixture file name. */
  readonly id: string;
  readonly label: string;
  /** The body to show (numbers masked for captures). */
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface PayloadsAnswer {
  readonly payloads: readonly PayloadChoice[];
}

/** The template playground's request: a route with its edits and a payload. */
export const PreviewRequest = z.strictObject({
  route: z.string().min(1).max(200),
  /** Overrides of the route's settings; absent keeps the config's. */
  template: z.string().max(10_000).optional(),
  when: z.string().max(2_000).optional(),
  recipients: z.array(z.string().max(200)).max(100).optional(),
  /** A captured payload (the server uses its unmasked body) … */
  capture: z.string().max(40).optional(),
  /** … or a fixture of the route's source … */
  fixture: z.string().max(200).optional(),
  /** … or a pasted body, no longer than a webhook ingest would accept. */
  payload: z.string().max(MAX_BODY_BYTES).optional(),
  headers: z.record(z.string().max(200), z.string().max(4_000)).optional(),
});
export type PreviewRequest = z.output<typeof PreviewRequest>;

export interface PreviewAnswer {
  /** `send` | `filtered` | `dropped` | `duplicate`…, or `invalid` when the edited route does not validate. */
  readonly verdict: string;
  readonly reason: string | null;
  readonly messages: readonly {
    /** Masked. */
    readonly to: readonly string[];
    readonly text: string;
    readonly encoding: string;
    readonly characters: number;
    readonly segments: number;
    /** segments × recipients × price of one SMS, when the price is known. */
    readonly estimatedCost: number | null;
    /** Present when the alert may spend the credit reserve on a normal route (Opsgenie's P1, P2). */
    readonly critical?: true;
  }[];
  readonly dropped: readonly { readonly entry: string; readonly reason: string }[];
  readonly warnings: readonly string[];
  /** The edited route as YAML, to paste under `routes:`. */
  readonly yaml: string;
}

/**
 * One thing that waits for a person, in the terminal's words (`needsAttention`):
 * `2 SMS parked: insufficient balance (balance 0 TZS), since 14:02. Top up, then [Redrive 2]`.
 * SMS items count at most one page of the state index (`more`: there are others beyond it).
 */
export interface AttentionItem {
  readonly kind: 'parked' | 'held' | 'unknown' | 'muted';
  /** SMS in that state (a muted route: 1). */
  readonly count: number;
  /** More than `count` wait: the bar says `100+`, and its button redrives the oldest `count`. */
  readonly more: boolean;
  /** The oldest one's last change (a mute: when it was set). */
  readonly since: string | null;
  /** What, with how many: `2 SMS parked`, `100+ SMS held`, `Route alerts muted` (then `until <time>`). */
  readonly what: string;
  /** Why: `insufficient balance (balance 0 TZS)`, the oldest record's reason, a mute's reason. */
  readonly why: string;
  /** What the person does: `Top up, then` before the Redrive button, or the whole instruction. */
  readonly action: string;
  /** The state the button redrives `ids` from; `null`: no button. */
  readonly redrive: 'PARKED' | 'HELD' | null;
  /** The records the button redrives, oldest first. */
  readonly ids: readonly string[];
  /** A muted route: which, and until when. */
  readonly route?: string;
  readonly until?: string;
}

/** `GET /attention`: the items, most urgent first; empty when nothing needs a person. */
export interface AttentionAnswer {
  readonly items: readonly AttentionItem[];
}

/** Days of credit the page can ask for. */
export const CREDIT_DAYS = { default: 14, max: 90 } as const;

/** One endpoint: the zod schemas of its request and its answer's type (the route map's {@link RouteSpec}). */
export type ApiRoute = RouteSpec;

/**
 * The console's API, `METHOD /path` under `/console/api`. A query or body the schema refuses is a
 * 400, a path parameter it refuses a 404 (the path names nothing); a GET endpoint also answers HEAD.
 */
/** A route's id in a path. */
export const RouteIdParameters = z.object({ id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/) });

/** An incident's id in a path. */
export const IncidentIdParameters = z.object({ id: z.string().regex(/^[0-9A-Z]{1,40}$/) });

/** A schedule's name in a path. */
export const ScheduleParameters = z.object({ schedule: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/) });

/** On call's Override form: who (a name of `people`), how long (`8h`, `1d`, or seconds) and why. */
export const ConsoleOverrideRequest = z.strictObject({
  person: z.string().min(1).max(64),
  for: z.union([z.string().max(20), z.number()]),
  reason: z.string().max(ONCALL.maxReasonChars).default(''),
});

/** `GET /incidents`: the open incidents, oldest first. */
export interface IncidentsAnswer {
  readonly incidents: readonly IncidentView[];
}

/** What On call's Acknowledge did: `acknowledged: false` when it was already closed (by a link, the CLI, another tab). */
export interface AcknowledgeAnswer {
  readonly acknowledged: boolean;
  readonly incident: IncidentView | null;
}

/** The Mute button's request: how long (`2h`, `30m`, `1d`, or seconds) and why. */
export const ConsoleMuteRequest = z.strictObject({
  for: z.union([z.string().max(20), z.number()]),
  reason: z.string().max(MAX_MUTE_REASON_CHARS).default(''),
});

/** `POST /circuit`: `{action: 'open', for: '30m'}` holds every SMS for a while, `{action: 'close'}` sends now. */
export const ConsoleCircuitRequest = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('close') }),
  z.strictObject({ action: z.literal('open'), for: z.union([z.string().max(20), z.number()]) }),
]);

export const CONSOLE_API = {
  'GET /overview': { answer: answers<Overview>() },
  /** The SMS service's circuit: since when it is unreachable and how many messages wait. */
  'GET /service': { answer: answers<ServiceStatus>() },
  /** The SMS service's Open/Close buttons: the same store calls as `sms-relay circuit open --for` and `close`. */
  'POST /circuit': { body: ConsoleCircuitRequest, answer: answers<CircuitChange>() },
  /** Activity: newest first (by last change; by creation when `route` is given, as `logs`). */
  /** The attention bar: what waits for a person (SMS parked, held, UNKNOWN; routes muted), bounded reads. */
  'GET /attention': { answer: answers<AttentionAnswer>() },
  /** The attention bar's Redrive: the same conditional requeue as `POST /_relay/redrive` and `sms-relay redrive`. */
  'POST /redrive': { body: RedriveRequest, answer: answers<RequeueOutcome>() },
  'GET /records': { query: RecordsPageQuery, answer: answers<RecordsPage>() },
  'GET /records/:id': { params: RecordIdParameters, answer: answers<RecordDetail>() },
  /** The same conditional requeue as `sms-relay redrive`; an UNKNOWN record needs `acceptDuplicates: true` (the page asks first). */
  'POST /records/:id/redrive': {
    params: RecordIdParameters,
    body: RedriveRecordRequest,
    answer: answers<RedriveAnswer>(),
  },
  /** The same conditional dismissal as `sms-relay dismiss`, by the OS user running the console, with the page's reason. */
  'POST /records/:id/dismiss': {
    params: RecordIdParameters,
    body: DismissRecordRequest,
    answer: answers<DismissAnswer>(),
  },
  'GET /routes': { answer: answers<RoutesAnswer>() },
  /** On call: each schedule's person now and until when, its overrides and next handoffs. */
  'GET /oncall': { answer: answers<OnCallAnswer>() },
  /** On call's open incidents, oldest first: the incidents `sms-relay incidents --json` lists, each with its story. */
  'GET /incidents': { answer: answers<IncidentsAnswer>() },
  /** On call's Acknowledge: the same conditional close as `sms-relay ack`, by the console's OS user. */
  'POST /incidents/:id/ack': { params: IncidentIdParameters, answer: answers<AcknowledgeAnswer>() },
  /** On call's Override: the same store call as `sms-relay oncall override <schedule> --person --for --reason`. */
  'POST /oncall/:schedule/override': {
    params: ScheduleParameters,
    body: ConsoleOverrideRequest,
    answer: answers<OnCallAnswer>(),
  },
  'GET /credit': {
    query: z.object({ days: wholeNumber(1, CREDIT_DAYS.max).default(CREDIT_DAYS.default) }),
    answer: answers<CreditAnswer>(),
  },
  'GET /payloads': { query: z.object({ route: z.string().max(200) }), answer: answers<PayloadsAnswer>() },
  'POST /preview': { body: PreviewRequest, answer: answers<PreviewAnswer>() },
  /** The Routes card's Mute button: the same store call as `sms-relay mute`. */
  'POST /routes/:id/mute': { params: RouteIdParameters, body: ConsoleMuteRequest, answer: answers<MuteAnswer>() },
  /** The Routes card's Unmute button: the same store call as `sms-relay unmute`. */
  'POST /routes/:id/unmute': { params: RouteIdParameters, answer: answers<MuteAnswer>() },
} as const satisfies RouteMap;

export type Endpoint = keyof typeof CONSOLE_API;
type RouteOf<E extends Endpoint> = (typeof CONSOLE_API)[E];

/** The answer of `endpoint`. */
export type AnswerOf<E extends Endpoint> = AnswerOfRoute<RouteOf<E>>;

/** What the server's handler of `endpoint` is given: its request as the schemas read it. */
export type HandlerRequest<E extends Endpoint> = RouteRequest<RouteOf<E>>;

/** What the page sends to `endpoint`: path parameters, query parameters and body, where it has them. */
export type ClientRequest<E extends Endpoint> = RouteCall<RouteOf<E>>;
