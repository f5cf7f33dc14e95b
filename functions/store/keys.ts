import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { TABLE } from './table';

/**
 * Key layout of every item kind. All key attributes are strings; numbers inside keys are
 * zero-padded so they sort as strings.
 */

type Key = Record<string, AttributeValue>;

const key = (pk: string, sk: string): Key => ({
  [TABLE.partitionKey]: { S: pk },
  [TABLE.sortKey]: { S: sk },
});

export const ItemKind = {
  Message: 'message',
  Dedupe: 'dedupe',
  Limit: 'limit',
  Spend: 'spend',
  Balance: 'balance',
  Capture: 'capture',
  BalanceReading: 'balance-reading',
  Mute: 'mute',
  Heartbeat: 'heartbeat',
  DigestWindow: 'digest-window',
  Circuit: 'circuit',
  RateWindow: 'rate-window',
  OnCallOverride: 'oncall-override',
  Incident: 'incident',
  IncidentOpen: 'incident-open',
  AckToken: 'ack-token',
  Alert: 'alert',
  AlertRef: 'alert-ref',
  AlertRequest: 'alert-request',
} as const;

export const messageKey = (id: string): Key => key(`MSG#${id}`, 'MSG');
export const dedupeKey = (route: string, dedupe: string): Key => key(`DEDUPE#${route}#${dedupe}`, 'DEDUPE');

export const limitPk = (route: string): string => `LIMIT#${route}`;
/** Ten digits of epoch seconds sort correctly until the year 2286. */
export const windowSk = (startEpoch: number): string => `W#${String(startEpoch).padStart(10, '0')}`;
export const daySk = (day: string): string => `D#${day}`;
export const limitKey = (route: string, sk: string): Key => key(limitPk(route), sk);
/** A route's calendar month (`YYYY-MM` in the route's time zone): its `creditsPerMonth` counter. */
export const monthSk = (month: string): string => `M#${month}`;

/** A route's own state items (its heartbeat), one partition per route. */
export const routeStatePk = (route: string): string => `ROUTE#${route}`;
export const heartbeatKey = (route: string): Key => key(routeStatePk(route), 'HEARTBEAT');
/** Every route's mute in one partition, so `sms-relay mutes` is one Query, with or without the config at hand. */
export const MUTES_PK = 'MUTES';
export const muteSk = (route: string): string => `ROUTE#${route}`;
export const muteKey = (route: string): Key => key(MUTES_PK, muteSk(route));

/** A schedule's on-call overrides, one partition per schedule, sorted by when each was set. */
export const onCallPk = (schedule: string): string => `ONCALL#${schedule}`;
export const overrideSk = (createdAt: string, id: string): string => `OVERRIDE#${createdAt}#${id}`;
export const overrideKey = (schedule: string, createdAt: string, id: string): Key =>
  key(onCallPk(schedule), overrideSk(createdAt, id));

/** A route's digest window: the one item two accepts race for to open it (see `openDigestWindow`). */
export const digestWindowKey = (route: string): Key => key(`WINDOW#${route}`, 'DIGEST');

/** The provider a store operation on a circuit, a balance or a rate is about when it names none. */
export const MAIN_PROVIDER = 'main';

/**
 * The sort key of provider `name`'s item beside `main`'s: `main` keeps the key it had before there
 * were several providers, so a table written then is read the same.
 */
const providerSk = (provider: string, mainSk: string): string =>
  provider === MAIN_PROVIDER ? mainSk : `PROVIDER#${provider}`;

/** A provider's circuit: one item every sender shares (see `functions/store/circuit.ts`). */
export const CIRCUIT_PK = 'CIRCUIT';
export const circuitKey = (provider: string = MAIN_PROVIDER): Key =>
  key(CIRCUIT_PK, providerSk(provider, 'SMS-SERVICE'));

/** One second of sends to a provider (its `maxPerSecond`): a partition per second, so no item stays hot. */
export const rateWindowKey = (epochSecond: number, provider: string = MAIN_PROVIDER): Key =>
  key(`RATE#${String(epochSecond).padStart(10, '0')}`, provider === MAIN_PROVIDER ? 'SENDS' : `SENDS#${provider}`);

/** A provider's balance watch and projected credit. */
export const balanceKey = (provider: string = MAIN_PROVIDER): Key => key('BALANCE', providerSk(provider, 'STATE'));

/**
 * What every route together spent, one item per UTC day (`D#YYYY-MM-DD`), and the item that says
 * since when the days are counted (`SINCE`): what the days-left forecast reads, a few items
 * whatever the volume (see `functions/store/spend.ts`).
 */
export const SPEND_PK = 'SPEND';
export const spendDayKey = (day: string): Key => key(SPEND_PK, daySk(day));
export const spendSinceKey = (): Key => key(SPEND_PK, 'SINCE');
export const BALANCE_READINGS_PK = 'BALANCE#READINGS';

export const capturePk = (route: string): string => `CAPTURE#${route}`;
/** A captured payload's key: by route, then by the time it was received and its id. */
export const captureKey = (route: string, receivedAt: string, id: string): Key =>
  key(capturePk(route), `${receivedAt}#${id}`);

/** A balance reading's key: by time, with a suffix that keeps two readings of the same millisecond apart. */
export const readingKey = (at: string, suffix: string): Key => key(BALANCE_READINGS_PK, `${at}#${suffix}`);

/** Epoch seconds, rounded down. */
export const epochSeconds = (at: Date): number => Math.floor(at.getTime() / 1000);

/** The UTC day of a time, `YYYY-MM-DD`. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

export const DAY_SECONDS = 86_400;

/**
 * Limit, spend and balance-reading items outlive their window or time by this much: long enough
 * for a monthly look back.
 */
export const MONTHLY_RETENTION_SECONDS = 35 * DAY_SECONDS;
