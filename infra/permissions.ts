import { TABLE } from '../functions/store/table';
import type { HandlerName } from './bundle';

const BY_STATE = TABLE.indexes.byState.name;
const BY_DUE = TABLE.indexes.byDue.name;

/**
 * Where on the table a grant applies: the table itself (items), or named indexes.
 * Index grants name each index; no `index/*` wildcard.
 */
export interface TableGrant {
  readonly actions: readonly string[];
  /** @default - the table's items only */
  readonly indexes?: readonly string[];
  /**
   * The partition keys (`dynamodb:LeadingKeys`, `*` a wildcard) the actions may touch: the item
   * kinds of `functions/store/keys.ts` the function writes. Each put of a transaction is checked
   * on its own, so an accept is bound by it too.
   * @default - any item
   */
  readonly writes?: readonly string[];
}

/**
 * What each function may do to the table: the operations its code paths in `functions/store` send,
 * spelled out instead of `grantReadWriteData`, which would add Scan, BatchWriteItem and DeleteItem
 * to every function. A store change that sends a new operation must be added here; the deployed
 * function otherwise fails with AccessDenied (dynalite, used locally, does not check IAM).
 *
 * | Store call | Operations |
 * |---|---|
 * | `acceptWebhook` (ingest; sweeper's limit summaries; balance-watch's low-balance SMS) | PutItem (its transaction's puts), GetItem |
 * | `claimMessage`, `mark*`, `releaseForRetry`, `reserveLimit`, `releaseLimit` (sender), `recordCreditsSpent`, `markSummarySent`, `updateBalanceState` | UpdateItem |
 * | `observeBalance` after a send or a 402 (sender): the balance state, the low-balance notice (no spend read: the watch's rate) | GetItem, PutItem, UpdateItem |
 * | `recordSpend` (sender, sweeper: the day's spend counter), `startSpendCount` (balance-watch) | UpdateItem |
 * | `recentSpend` (balance-watch's forecast: the week's day counters) | BatchGetItem |
 * | `reserveCredit`, `settleCredit`, `observeSentCredit` (sender), `rebaseCredit` (sender, balance-watch), `keepStaleCredit` (sweeper) | GetItem, UpdateItem |
 * | `findDuePending` | Query on `byDue` (and, for records written before it, `byStateSummary`), then BatchGetItem of the records |
 * | `findStaleSending` | Query on `byStateSummary`, then BatchGetItem of the records |
 * | `heldSummaryDue` | Query on the table |
 * | `circuit.failed` (sender, sweeper): the circuit's count, and whether a message was settled SENT since the last failure | GetItem, Query on `byStateSummary` (one entry), UpdateItem |
 * | `getMute` (ingest, sender), `touchHeartbeat` (ingest), `getHeartbeat`, the heartbeat transitions, `markBudgetWarned` (sweeper, sender) | GetItem, UpdateItem |
 * | `muteRoute`, `unmuteRoute`, `listMutes` (the CLI and the console, with the operator's credentials) | PutItem, UpdateItem, Query |
 * | `activeOverrides` (ingest, for `oncall:` recipients; the CLI), `overrideOnCall` (the CLI, with the operator's credentials) | Query, PutItem |
 *
 * The accept is a `TransactWriteItems` of puts. There is no `TransactWriteItems` IAM action: each
 * item of a transaction is authorised as its own action, so its puts need `PutItem` (an `Update`
 * would need `UpdateItem`, a `ConditionCheck` `ConditionCheckItem`, which no function has).
 * The stream (sender), the failure queue (sender's on-failure destination) and the dead-letter
 * queue (the scheduled functions) are granted by the constructs that wire them; each function
 * reads its one secret ({@link SECRET_ACCESS}) with `secretsmanager:GetSecretValue` only.
 *
 * @example
 * ```ts
 * TABLE_ACCESS.sweeper[1]; // { actions: ['dynamodb:Query'], indexes: ['byStateSummary', 'byDue'] }
 * ```
 */
export const TABLE_ACCESS = {
  // acceptWebhook: the transaction's guard and record puts, a duplicate's reads of the records and its
  // puts of the missing ones; getMute (a read, cached for a few seconds); touchHeartbeat (a conditional
  // update, at most once a minute per route); activeOverrides (a Query of a schedule's overrides, for
  // a route with oncall: recipients); a paging route's incident, its open marker and acknowledge
  // tokens; the acknowledge link's close; a digest window; a captured payload; Opsgenie's alert API's
  // alerts, their references (alias, tiny id) and request statuses (functions/store/alert-api.ts).
  ingest: [
    { actions: ['dynamodb:GetItem', 'dynamodb:Query'] },
    {
      actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
      writes: [
        'MSG#*',
        'DEDUPE#*',
        'CAPTURE#*',
        'ROUTE#*',
        'WINDOW#*',
        'INCIDENT#*',
        'INCIDENTS',
        'ACK#*',
        'ALERT#*',
        'ALERTREF#*',
        'ALERTREQ#*',
      ],
    },
  ],
  // Every step of a send is a conditional update of its record; the credit gate's route limits,
  // balance state, price and projected balance, the day's spend counter, the circuit, and the notices
  // it records (low balance, a month budget's warning), the provider's per-second send counter
  // (`provider.maxPerSecond`), and the not-sent line on an incident's timeline (an SMS held by an
  // outage until its incident was acknowledged). A balance crossing seen in a send result records the
  // low-balance SMS with the rate the balance watch kept: no spend is read. A failure counted after
  // another asks the state index whether a message was settled SENT since (the circuit's "in a row").
  sender: [
    { actions: ['dynamodb:GetItem', 'dynamodb:Query'] },
    { actions: ['dynamodb:Query'], indexes: [BY_STATE] },
    {
      actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
      writes: ['MSG#*', 'DEDUPE#*', 'LIMIT#*', 'BALANCE', 'SPEND', 'CIRCUIT', 'RATE#*', 'INCIDENT#*'],
    },
  ],
  // The sweeper sends as the sender does and runs every recovery: stale credit, held summaries,
  // heartbeats, digests, escalations (with their acknowledge tokens) and handoff notices.
  sweeper: [
    { actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'] },
    { actions: ['dynamodb:Query'], indexes: [BY_STATE, BY_DUE] },
    {
      actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
      writes: [
        'MSG#*',
        'DEDUPE#*',
        'LIMIT#*',
        'BALANCE',
        'SPEND',
        'CIRCUIT',
        'RATE#*',
        'ROUTE#*',
        'WINDOW#*',
        'INCIDENT#*',
        'INCIDENTS',
        'ACK#*',
      ],
    },
  ],
  // The forecast reads the week's spend counters (one BatchGetItem of eight items); the watch keeps
  // the balance state, its readings, when spend began to be counted, and records its notice.
  'balance-watch': [
    { actions: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'] },
    {
      actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
      writes: ['BALANCE', 'BALANCE#READINGS', 'SPEND', 'MSG#*', 'DEDUPE#*'],
    },
  ],
} as const satisfies Record<HandlerName, readonly TableGrant[]>;

/** The one Secrets Manager action the functions need. */
export const SECRET_READ_ACTIONS = ['secretsmanager:GetSecretValue'] as const;

/**
 * The one secret each function may read: ingest, which faces the internet, the route secrets that
 * authenticate webhooks; the functions that call the SMS service, the provider key. Neither side
 * can read the other's.
 */
export const SECRET_ACCESS = {
  ingest: 'routes',
  sender: 'provider',
  sweeper: 'provider',
  'balance-watch': 'provider',
} as const satisfies Record<HandlerName, 'routes' | 'provider'>;
