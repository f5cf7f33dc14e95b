/**
 * The relay's fixed caps and defaults, in one place: the core, the store, the handlers, `infra/`
 * and `local/` import them from here, and the docs quote them.
 */

/**
 * At most this many SMS (fan-out items × parts) come from one webhook. Whole items are kept until
 * the next would pass the cap; the items beyond it are recorded as one `DROPPED` record that says
 * how many were not sent, and the 202 answer says so too.
 */
export const MAX_MESSAGES_PER_WEBHOOK = 50;

/**
 * Records one accept may write: the SMS of {@link MAX_MESSAGES_PER_WEBHOOK}, plus one `DROPPED`
 * record standing for everything that produced no SMS (items filtered, dropped or beyond the cap).
 */
export const MAX_RECORDS_PER_WEBHOOK = MAX_MESSAGES_PER_WEBHOOK + 1;

/** `routes.<id>.maxRecipients` when a route does not set it. */
export const DEFAULT_MAX_RECIPIENTS = 10;

/**
 * The largest `maxRecipients` a route may set: a record holds its recipients, and DynamoDB items
 * hold 400 KB at most.
 */
export const MAX_RECIPIENTS_CEILING = 10_000;

/**
 * JSON nested deeper than this is never a real webhook (GitHub's deepest payloads are about 8
 * levels); such a body is dropped with a reason before anything recurses over it.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * LiquidJS's denial-of-service limits, on every template render (ingest, the console's preview,
 * `sms-relay preview`). A real SMS template renders in well under a millisecond and allocates a
 * few kilobytes; these stop a template (or a payload it loops over) that would hold the process.
 */
export const TEMPLATE_LIMITS = {
  /** Characters of one template or `when` source (LiquidJS `parseLimit`). */
  parseChars: 65_536,
  /**
   * Milliseconds all the renders of one webhook may take together, every fan-out item included
   * (LiquidJS `renderLimit`, given what is left of this budget at each render). Ingest answers
   * within its 10 s time-out even so.
   */
  renderMs: 1_000,
  /**
   * What one render may allocate, in LiquidJS's units (characters of strings built, elements of
   * arrays and ranges built; LiquidJS `memoryLimit`): about 20 MB of strings.
   */
  memory: 10_000_000,
} as const;

/**
 * The console's template preview runs in a worker thread (a render holds its thread until it
 * ends); a preview still running after this is stopped by ending the worker, whatever it is doing.
 * Above `TEMPLATE_LIMITS.renderMs`, so LiquidJS's own limits answer first with their reason.
 */
export const PREVIEW_TIMEOUT_MS = 5_000;

/**
 * The currency of amounts when nothing names one: a route's `currency`, the templates' `money`
 * filters, the sandbox SMS service's account and the console's figures (Tanzanian shillings, the
 * home market of the SMS service this relay was built for).
 */
export const DEFAULT_CURRENCY = 'TZS';

/** A route's `timeZone` (quiet hours, digests, `date_tz`) when it names none. */
export const DEFAULT_TIME_ZONE = 'Africa/Dar_es_Salaam';

/** The largest webhook body accepted (`MAX_BODY_BYTES`); a bigger one is refused with 413 before parsing. */
export const MAX_BODY_BYTES = 262_144;

/** The deadline of one call to the SMS service (`provider.timeoutMs`). */
export const PROVIDER_TIMEOUT_MS = 10_000;

/**
 * Longest an idle connection to the SMS service is reused: under the 5 s keep-alive of Node,
 * Apache and most servers (undici and agentkeepalive pick 4 s for the same reason), and lower when
 * the service announces a shorter `Keep-Alive: timeout`.
 */
export const PROVIDER_KEEP_ALIVE_MS = 4_000;

/** A deployed environment's secret is `sms-relay/<env>` when its config names no `secrets`. */
export const SECRET_NAME_PREFIX = 'sms-relay/';

/** `balance.schedule` when a config sets none; without `balance` the watch still publishes the balance. */
export const BALANCE_SCHEDULE = 'rate(1 hour)';

/** How often the sweeper runs on AWS (retries, redrives, records a dead sender left, limit summaries). */
export const SWEEP_SCHEDULE = 'rate(1 minute)';

/**
 * How long each deployed function may run, in seconds. Ingest: webhook senders give up after about
 * 10 s (GitHub: 10 s) and retry. Sender: a batch of up to 10 sends at 10 s each, a few at a time.
 * Sweeper: its run's paging watch (`SWEEP_RUN.pagingWatchMs`, 75 s) and the recording of a step due
 * at its end; its sends stop at `SWEEP_RUN.stepsMs`, so only the paging watches of two runs overlap.
 */
export const HANDLER_TIMEOUT_SECONDS = { ingest: 10, sender: 60, sweeper: 90, 'balance-watch': 30 } as const;

/**
 * How new records reach the sender: DynamoDB stream batches of up to 10, with no batching window
 * (0 s: at alert rates a batch rarely fills, so a window would be added in full to every SMS's
 * delay; a storm still arrives in batches of what gathered during the previous poll), two batches
 * per shard in flight (a slow provider call holds up half a shard, not all of it), 3 retries of a
 * failed batch.
 */
export const STREAM = {
  batchSize: 10,
  maxBatchingWindowSeconds: 0,
  parallelizationFactor: 2,
  retryAttempts: 3,
} as const;

/**
 * Sends one sender invocation makes at once: 10 records, each allowed the provider's 10 s, finish in
 * 3 rounds inside the sender's 60 s.
 */
export const SENDER_CONCURRENCY = 4;

/** Time kept free in an invocation for a send in flight to finish, beside the provider's time-out. */
export const SEND_MARGIN_MS = 5_000;

/** The sender's retries (`RETRY_MAX_ATTEMPTS`, `RETRY_BASE_DELAY_MS`, `STALE_SENDING_MS`). */
export const RETRY = {
  /** Attempts per message, the first included. */
  maxAttempts: 5,
  /** Delay before the second attempt; doubles each time. */
  baseDelayMs: 5_000,
  /** Longest delay between two attempts. */
  maxDelayMs: 300_000,
  /** A record in SENDING for longer than this belongs to a sender that died; must exceed the provider time-out. */
  staleSendingMs: 120_000,
} as const;

/** `routes.<id>.retry.for` when a route sets none: an at-least-once message is retried this long (seconds) after it was accepted. */
export const DEFAULT_RETRY_FOR_SECONDS = 3_600;

/** The longest `retry.for` a route may set: a message still retried after a week helps nobody. */
export const MAX_RETRY_FOR_SECONDS = 7 * 86_400;

/**
 * The SMS service's circuit, shared by every sender through one item in the table. After
 * `failuresToOpen` sends in a row fail in a way that says the service is unreachable (refused,
 * DNS, time-outs, resets, 5xx, an undocumented status such as 429), the relay starts no send:
 * messages wait PENDING without spending attempts, and one process at a time probes the balance
 * endpoint (free, sends nothing), `firstProbeMs` after the opening and then at a doubling backoff
 * up to `maxProbeMs`. A probe that succeeds closes it.
 */
export const CIRCUIT = {
  /** Failures in a row that open the circuit: a blip costs a retry, an outage at most this many maybe-sent messages plus the sends already under way. */
  failuresToOpen: 3,
  firstProbeMs: 2_000,
  maxProbeMs: 30_000,
  /** How long a process trusts the circuit it read before it reads it again. */
  knownMs: 3_000,
  /** A probe's time-out. */
  probeTimeoutMs: 5_000,
  /** A probe holds the right to probe this long: past it (the prober stopped), another process may probe. */
  probeLeaseMs: 15_000,
  /**
   * Failed probes of the balance endpoint after which a probe is a real send (an at-least-once or
   * notice record): a balance endpoint that fails while sends work must not stop every SMS.
   */
  balanceProbesBeforeSendProbe: 5,
  /**
   * From then on, how long a due probe is kept for a send: only when no such record has come to a
   * sender for this long (none is waiting) is the balance endpoint probed again.
   */
  sendProbeWaitMs: 60_000,
} as const;

/**
 * How much of a message record's `history` is kept: its first `first` state changes (how it was
 * accepted and first tried) and its last `last`; the changes between are dropped and counted in the
 * record's `historyOmitted`. 43 entries of at most about 1 KB each (see `MAX_HISTORY_TEXT_CHARS`)
 * keep every record far below DynamoDB's 400 KB item limit, however often it is retried or redriven.
 */
export const HISTORY_KEPT = { first: 3, last: 40 } as const;

/**
 * How long a process gathers the credits of its sends before it adds them to the day's spend
 * counter in one write (`recordSpend`): a trickle's SMS each wrote it before, and that write met
 * the next webhook's claim in the local store. A crash loses at most this much of one process's
 * spend from the forecast's counter (the SMS and their records are not affected).
 */
export const SPEND_WINDOW_MS = 1_000;

/**
 * How long a store keeps the price it last wrote or read as known: a send at that price writes
 * nothing within it, so the price item is written when the price changes (and once per this time
 * per process, which bounds how long a price another process wrote can stand unchallenged).
 */
export const PRICE_KNOWN_MS = 300_000;

/**
 * How long a process takes the low-balance alert's state (armed or not) it last wrote or read as
 * known: a send whose balance leaves that state as it is writes nothing within it, so the balance
 * item is not written on every send; the balance watch always writes, and this bounds how long a
 * change another process made goes unseen by this one's sends.
 */
export const ALERT_STATE_KNOWN_MS = 300_000;

/** An hour in seconds: the unit the source packs' dedupe windows and timestamp tolerances are written in. */
export const HOUR_SECONDS = 3_600;

/** How long a message record is kept when its config sets no `retentionDays` (DynamoDB TTL). */
export const DEFAULT_RETENTION_DAYS = 90;

/** The SMS service's phone number format: `255` and nine digits, no `+`. */
export const PHONE_NUMBER_PATTERN = /^255\d{9}$/;

/**
 * A recipient as records and the store keep it: its E.164 digits without the `+` (a country code
 * then at most 15 digits in all), so a Tanzanian number is `255712345678` as it always was.
 */
export const E164_DIGITS_PATTERN = /^[1-9]\d{6,14}$/;

/** The E.164 prefix of the numbers the SMS service texts (the provider type `sms-service`). */
export const SMS_SERVICE_PREFIX = '+255';

/**
 * The SMS service accepts a `message` of at most this many characters, counted as JavaScript
 * `length` (UTF-16 code units).
 */
export const MAX_MESSAGE_LENGTH = 160;

/**
 * The sweeper leaves PENDING records younger than this to the stream-fed sender
 * (`SWEEP_PENDING_GRACE_MS`): on AWS the stream delivers a new record within about a second, and
 * the sweeper is the safety net. The local runtime, which has no stream, sets 0.
 */
export const SWEEP_PENDING_GRACE_MS = 10_000;

/**
 * Record pages: the size of a page when a caller names none, the largest a caller may ask for, and
 * the page the console's activity list asks for (its browser bundle imports this file).
 */
export const PAGE_SIZE = { default: 100, max: 1_000, console: 50 } as const;

/** How many of the latest records a short listing shows (`sms-relay logs`, captured requests). */
export const RECENT_LIMIT = 50;

/**
 * A route's dead-man's switch (`routes.<id>.heartbeat`): the `grace` when the config names none,
 * and the least `every` and `grace` may be, since the sweeper that checks it runs once a minute
 * (`SWEEP_SCHEDULE`).
 */
export const HEARTBEAT = { graceSeconds: 120, minSeconds: 60 } as const;

/**
 * How often, at most, an authenticated webhook writes its route's "last seen" time: at most once a
 * minute, and at most every half `grace`, so the time the sweeper reads is never more than half
 * the grace behind. One write per route per minute instead of one per webhook.
 */
export const HEARTBEAT_TOUCH_MAX_MS = 60_000;

/** The share of `limits.creditsPerMonth` whose passing sends one warning SMS to `balance.notify`. */
export const MONTH_BUDGET_WARNING_SHARE = 0.8;

/** The longest a mute may be set for: a forgotten mute must not silence a route for ever. */
export const MAX_MUTE_SECONDS = 30 * 86_400;

/** The longest reason a mute keeps: it becomes part of every dropped record's reason. */
export const MAX_MUTE_REASON_CHARS = 200;

/**
 * A dismissal's bounds (`sms-relay dismiss`, `POST /_relay/dismiss`, the console's Dismiss): its
 * reason is required and kept whole on the record (its history entry is cut at 500 characters
 * anyway), and who dismissed it is a name, not a story.
 */
export const DISMISS = { maxReasonChars: 500, maxByChars: 64 } as const;

/**
 * How long a process trusts the mute it read for a route (ms) before it reads it again: a mute set
 * from another process (`sms-relay mute --env`) drops messages within this time.
 */
export const MUTE_KNOWN_MS = 10_000;

/**
 * Digests (`routes.<id>.digest`, `quietHours`): a window is digested `graceMs` after it ends, so an
 * accept that joined it just before (ingest runs at most its time-out) has written its records; one
 * digest stands for at most `maxMessages` records (the rest go out in the next millisecond's digest,
 * a second SMS); a digest's dedupe key holds for `dedupeSeconds`, longer than any window.
 */
export const DIGEST = {
  graceMs: HANDLER_TIMEOUT_SECONDS.ingest * 1_000 + SEND_MARGIN_MS,
  /** The local runtime's grace: its ingest writes in-process, with no 10 s time-out to wait out. */
  localGraceMs: 1_000,
  maxMessages: 200,
  /** DEFERRED records one sweep reads at most (every route's); the rest wait for the next sweep. */
  scanLimit: 1_000,
  dedupeSeconds: 35 * 86_400,
} as const;

/**
 * On call (`schedules`, `sms-relay oncall override`): a rotation's shift lasts `minEverySeconds` at
 * least (the sweeper's and an SMS's resolution is a minute); an override lasts at most
 * `maxOverrideSeconds` (a forgotten one must not keep a person on call for ever) and keeps a reason
 * of `maxReasonChars`; an override item stays in the table `keptSeconds` after it ends, so who
 * covered last week can still be read. A handoff SMS (`notifyHandoff`) is still sent up to
 * `handoffGraceSeconds` after its shift began (a sweeper that was down catches up), never later
 * (turning `notifyHandoff` on mid-shift texts nobody about a shift long begun).
 */
export const ONCALL = {
  minEverySeconds: 60,
  maxOverrideSeconds: 30 * 86_400,
  maxReasonChars: 200,
  keptSeconds: 35 * 86_400,
  handoffGraceSeconds: 3600,
} as const;

/**
 * Paging (escalation, renotify, the acknowledge link): the shortest step (the sweeper acts once a
 * minute), the most repeats, the token's random bytes (128 bits, 22 base64url characters), how long
 * a link answers after its incident closed, how long a closed incident is kept, and the least room
 * the link may leave for the text before `validate` warns.
 */
export const PAGING = {
  minStepSeconds: 60,
  maxRenotify: 10,
  tokenBytes: 16,
  linkAfterCloseSeconds: 24 * 3600,
  keptSeconds: 35 * 86_400,
  minTextChars: 60,
  linkPath: '/a/',
  /**
   * The most entries an incident's timeline keeps: opened, one counted `repeated`, the steps, the
   * renotifies and the close fit; the item stays a few KB whatever the number of repeats.
   */
  maxTimelineEntries: 50,
  /** The most escalation steps a route takes, so every step of an incident has its line on the timeline. */
  maxSteps: 30,
  /**
   * A step this far past its due time when the next step is due too was missed (the relay was not
   * running): the steps are collapsed into one SMS for the latest step due, the timeline noting the
   * ones skipped. Far above the 5 s a running relay takes, far below the shortest step (1 min).
   */
  missedAfterMs: 30_000,
  /** An open incident whose next step is this far past due counts in `IncidentsOverdue`. */
  overdueAfterMs: 120_000,
  /** Incidents whose steps are recorded at once in one pass: a burst of steps due together must not queue. */
  concurrency: 4,
} as const;

/**
 * One sweeper run on AWS, started each minute by its schedule (`SWEEP_SCHEDULE`). Its steps (sends,
 * recoveries, probes) start nothing after `stepsMs`, so they never overlap the next run's; while an
 * open incident has a step to come, its paging steps are recorded at their due time while the run
 * stays, until `pagingWatchMs` after it started: the minute to the next run plus an overlap for a schedule that fires late, so a step is
 * never in a gap between two runs. While it stays, it reads the open incidents again at least every
 * `pagingPollMs` (an incident opened since the run began), and sleeps until the next step due.
 */
export const SWEEP_RUN = { stepsMs: 55_000, pagingWatchMs: 75_000, pagingPollMs: 2_000 } as const;

/**
 * How the sweeper on AWS hands waiting records back to the stream-fed sender (see
 * `functions/relay/wake.ts`): each due PENDING record not woken yet is woken (one conditional
 * update each, `concurrency` at a time, at most `maxPerRun` a run), so a backlog left by an outage
 * goes out at the sender's full rate, not the sweep's page a minute. A record woken `sendHereAfterMs`
 * ago and still not taken is sent by the sweep itself, as before waking existed: the safety net
 * should the stream not deliver.
 */
export const WAKE = { concurrency: 16, maxPerRun: 20_000, sendHereAfterMs: 5 * 60_000 } as const;
