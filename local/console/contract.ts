/**
 * The console's JSON API: what `/console/api/*` answers and what the page reads. The server
 * builds these from the store's records and the core's evaluation; there is no second model of a
 * record. Phone numbers are masked (`2557****678`) in every value; no secret value ever appears.
 *
 * Paths (all answer JSON; errors are `{ "error": "…" }` with a 4xx/5xx status):
 * - `GET  /console/api/overview`                 → {@link Overview}
 * - `GET  /console/api/records?route&state&since&before&cursor&limit` → {@link RecordsPage}
 * - `GET  /console/api/records/<id>`             → {@link RecordDetail}
 * - `POST /console/api/records/<id>/redrive`     → {@link RedriveAnswer} (anti-forgery header)
 * - `GET  /console/api/routes`                   → {@link RoutesAnswer}
 * - `GET  /console/api/credit?days`              → {@link CreditAnswer}
 * - `GET  /console/api/payloads?route`           → {@link PayloadsAnswer}
 * - `POST /console/api/preview`                  → {@link PreviewAnswer} (anti-forgery header)
 *
 * Every request carries the session cookie set by the one-time link (see `access.ts`); every POST
 * also carries the header {@link CONSOLE_REQUEST_HEADER} and `content-type: application/json`.
 */

/**
 * The header of every state-changing request from the page. Its value does not matter: a page of
 * another site cannot add a custom header to a request here without a CORS preflight, which this
 * server never approves, and a form cannot add one at all.
 */
export const CONSOLE_REQUEST_HEADER = 'x-sms-relay-console';

export type State = 'PENDING' | 'SENDING' | 'SENT' | 'FAILED' | 'UNKNOWN' | 'PARKED' | 'HELD' | 'DROPPED' | 'DEFERRED' | 'DIGESTED';

/** A record as a row of Activity, the same view `sms-relay logs --json` prints. */
export interface RecordRow {
  readonly id: string;
  readonly route: string;
  readonly state: State;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Masked. */
  readonly to: readonly string[];
  readonly segments: number;
  readonly attempts: number;
  readonly reason: string | null;
  readonly deducted: number | null;
  readonly remainingBalance: number | null;
}

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
  /** States a record can be redriven from: PARKED, FAILED, HELD. */
  readonly redriveStates: readonly State[];
  readonly currency: string;
}

/** Newest first (by last change; by creation when `route` is given, as `logs`). */
export interface RecordsPage {
  readonly records: readonly RecordRow[];
  /** Pass back as `cursor` for the next (older) page; absent on the last page. */
  readonly cursor?: string;
}

export interface StateChange {
  readonly at: string;
  readonly state: State;
  readonly reason?: string;
}

export interface AttemptError {
  readonly at: string;
  readonly name: string;
  readonly status?: number;
  /** `not-sent` | `maybe-sent` … */
  readonly delivery?: string;
  readonly message: string;
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
    readonly remainingBalance: number;
    readonly message: string;
    readonly senderId: string;
    readonly sentAt: string | null;
  } | null;
  /** The error of each failed attempt, oldest first. */
  readonly errors: readonly AttemptError[];
  /** The webhook as received, when the route captures payloads and it is still kept. */
  readonly capture: CapturedPayloadView | null;
  readonly redrivable: boolean;
  /**
   * A digest's links: on a DIGESTED record the digest that carried it (`id`); on a digest record the
   * DEFERRED records it stands for (`of`, oldest first). `null` on other records.
   */
  readonly digest: { readonly id: string | null; readonly of: readonly string[] } | null;
}

export interface RedriveAnswer {
  readonly requeued: boolean;
  readonly record: RecordRow | null;
}

export interface LimitUse {
  readonly kind: 'messages' | 'credits';
  /** Messages in the current window, or credits reserved today. */
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
  /** `quietHours` as configured (e.g. `22:00–07:00 mon tue`, in `timeZone`), or null. */
  readonly quietHours: string | null;
  /** The digest window in seconds, or null when the route sends each message on its own. */
  readonly digestSeconds: number | null;
  readonly timeZone: string;
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

export interface PreviewRequest {
  readonly route: string;
  /** Overrides of the route's settings; absent keeps the config's. */
  readonly template?: string;
  readonly when?: string;
  readonly recipients?: readonly string[];
  /** A captured payload (the server uses its unmasked body) … */
  readonly capture?: string;
  /** … or a fixture of the route's source … */
  readonly fixture?: string;
  /** … or a pasted body. */
  readonly payload?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

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
  }[];
  readonly dropped: readonly { readonly entry: string; readonly reason: string }[];
  readonly warnings: readonly string[];
  /** The edited route as YAML, to paste under `routes:`. */
  readonly yaml: string;
}
