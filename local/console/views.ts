import type { RouteConfig } from '../../functions/core/config/schema';
import { balanceCurrency } from '../../functions/core/config/view';
import { HISTORY_KEPT } from '../../functions/core/defaults';
import { maskNumbersInText } from '../../functions/core/recipients';
import { capturedHeaderNames } from '../../functions/core/sources/captured-headers';
import type { SourcePack } from '../../functions/core/sources/types';
import { forecastBalance, MIN_FORECAST_MS } from '../../functions/relay/balance';
import { NOTICE_ROUTE } from '../../functions/relay/ports';
import { clockTime, monthBounds } from '../../functions/core/local-time';
import {
  type CapturedPayload,
  keptHeaders,
  MessageState,
  type MessageRecord,
  type MessageStore,
  type Mute,
  type RecordSummary,
} from '../../functions/store';
import { DISMISS_STATES, MAY_HAVE_ARRIVED, needsAcceptDuplicates, REDRIVE_STATES, toRecordView } from '../records';
import type {
  AttemptError,
  CapturedPayloadView,
  CreditAnswer,
  LimitUse,
  MuteView,
  RecordDetail,
  RouteSummary,
  State,
} from './contract';
import type { ConsoleSource } from './source';
import { ATTENTION_PAGE } from './attention';

const DAY_MS = 86_400_000;
/** Days of spend the limit and spend items are kept (the store's retention of them). */
export const MAX_CREDIT_DAYS = 35;
/**
 * Sends drawn as balance points at most: the newest (the balance watch's readings draw the rest of
 * the period). A chart a page wide shows no more, and each one is a record read.
 */
const MAX_BALANCE_POINTS = 500;

/** A record's whole story: its SMS, every state change, the service's answer, each error, its webhook. */
export function recordDetail(
  record: MessageRecord,
  capture: CapturedPayload | undefined,
  route: CapturingRoute | undefined,
): Omit<RecordDetail, 'incident'> {
  const history = record.history.map((change) => ({
    at: change.at,
    state: change.state as State,
    ...(change.reason === undefined ? {} : { reason: maskNumbersInText(change.reason) }),
    ...(change.provider === undefined ? {} : { provider: change.provider }),
  }));
  const errors: AttemptError[] = record.history.flatMap((change) =>
    change.error === undefined ? [] : [attemptError(change.at, change.error, change.provider)],
  );
  return {
    record: toRecordView(record),
    sms: {
      text: maskNumbersInText(record.text),
      encoding: record.encoding,
      characters: record.characters,
      segments: record.segments,
      part: record.part,
      parts: record.parts,
      index: record.index,
      senderId: record.senderId ?? null,
      delivery: record.delivery,
      notice: record.notice ?? null,
    },
    history,
    // The store drops the changes between the first ones and the last ones (see `boundedHistory`).
    historyOmitted: record.historyOmitted
      ? { count: record.historyOmitted, after: Math.min(HISTORY_KEPT.first, history.length) }
      : null,
    result:
      record.result === undefined
        ? null
        : {
            deducted: record.result.deducted,
            remainingBalance: record.result.remainingBalance ?? null,
            message: maskNumbersInText(record.result.message),
            senderId: record.result.senderId,
            sentAt: record.sentAt ?? null,
          },
    errors,
    capture: capture === undefined ? null : captureView(capture, route),
    redrivable: (REDRIVE_STATES as readonly string[]).includes(record.state),
    dismissible: (DISMISS_STATES as readonly string[]).includes(record.state),
    redriveWarning: needsAcceptDuplicates(record.state)
      ? `${MAY_HAVE_ARRIVED.charAt(0).toUpperCase()}${MAY_HAVE_ARRIVED.slice(1)}.`
      : null,
    digest:
      record.digestId === undefined && record.digestOf === undefined
        ? null
        : { id: record.digestId ?? null, of: record.digestOf ?? [] },
  };
}

function attemptError(
  at: string,
  error: NonNullable<MessageRecord['lastError']>,
  provider: string | undefined,
): AttemptError {
  return {
    at,
    name: error.name,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.delivery === undefined ? {} : { delivery: error.delivery }),
    message: maskNumbersInText(error.message),
    ...(provider === undefined ? {} : { provider }),
  };
}

/** The route a capture belongs to: its source and settings name the headers a capture may show. */
export interface CapturingRoute {
  readonly pack: SourcePack;
  readonly config: RouteConfig;
}

/**
 * A capture as the page shows it: only the route's allowed headers (a capture stored before the
 * allow-list may hold others), and numbers masked in their values and in the body. A base64 body
 * (bytes that are not UTF-8, such as Latin-1 text) is read as text to be masked, and stays base64.
 */
export function captureView(capture: CapturedPayload, route: CapturingRoute | undefined): CapturedPayloadView {
  const allowed = route === undefined ? [] : capturedHeaderNames(route.pack, route.config);
  return {
    id: capture.id,
    route: capture.route,
    receivedAt: capture.receivedAt,
    headers: Object.fromEntries(
      Object.entries(keptHeaders(capture.headers, allowed)).map(([name, value]) => [name, maskNumbersInText(value)]),
    ),
    body: capture.bodyEncoding === 'utf8' ? maskNumbersInText(capture.body) : maskBase64Text(capture.body),
    bodyEncoding: capture.bodyEncoding,
    recordIds: capture.recordIds,
  };
}

/** Numbers masked in bytes kept as base64, read one character per byte (digits are ASCII in any such text). */
function maskBase64Text(body: string): string {
  const text = Buffer.from(body, 'base64').toString('latin1');
  const masked = maskNumbersInText(text);
  return masked === text ? body : Buffer.from(masked, 'latin1').toString('base64');
}

/**
 * Each route: where to post, the last webhook, what the last 24 hours became, and how much of each
 * limit is used now. One listing of the day's records serves every route.
 */
export async function routeSummaries(source: ConsoleSource, store: MessageStore, now: Date): Promise<RouteSummary[]> {
  const dayAgo = new Date(now.getTime() - DAY_MS);
  // Created in the last day implies changed in it: one pass over the day's changes finds them all,
  // from the state index (not a scan of every record on the local store): counts to look at.
  const recent = await store.summarizeRecords({ since: dayAgo, fromIndex: true });
  const byRoute = new Map<string, RecordSummary[]>();
  for (const record of recent) {
    if (record.createdAt < dayAgo.toISOString()) continue;
    const list = byRoute.get(record.route);
    if (list === undefined) byRoute.set(record.route, [record]);
    else list.push(record);
  }
  const routes = [...source.loaded.routes.values()];
  const quiet = routes.filter((route) => !byRoute.has(route.id)).map((route) => route.id);
  const [newest, mutes] = await Promise.all([
    quiet.length === 0 ? new Map<string, string>() : store.newestByRoute(quiet),
    store.listMutes({ now }),
  ]);
  return await Promise.all(
    routes.map(async (route): Promise<RouteSummary> => {
      const records = byRoute.get(route.id) ?? [];
      const last24h: Partial<Record<State, number>> = {};
      for (const record of records) last24h[record.state] = (last24h[record.state] ?? 0) + 1;
      return {
        id: route.id,
        source: route.pack.name,
        webhookUrl: `${source.webhookBase ?? ''}/hooks/${encodeURIComponent(route.id)}`,
        priority: route.config.priority,
        delivery: route.config.delivery,
        maxRecipients: route.config.maxRecipients,
        captureSeconds: route.config.capture ?? null,
        lastWebhookAt: await lastWebhookAt(
          store,
          route.id,
          route.config.capture !== undefined,
          records,
          newest.get(route.id),
        ),
        last24h,
        limits: await limitUses(store, route.id, route.config.limits, now, route.config.timeZone, recent),
        mute: muteView(
          mutes.find((mute) => mute.route === route.id),
          route.config.timeZone,
          now,
        ),
        heartbeat:
          route.config.heartbeat === undefined ? null : await heartbeatView(store, route.id, route.config.heartbeat),
        quietHours:
          route.config.quietHours === undefined
            ? null
            : `${route.config.quietHours.from}–${route.config.quietHours.to} ${route.config.quietHours.days.length === 7 ? 'every day' : route.config.quietHours.days.join(' ')}`,
        digestSeconds: route.config.digest?.window ?? null,
        timeZone: route.config.timeZone,
      };
    }),
  );
}

/**
 * When the route last received a webhook: its newest capture (pings and duplicates count; a key
 * lookup), or its newest record (of the day, else of all time).
 */
async function lastWebhookAt(
  store: MessageStore,
  route: string,
  captures: boolean,
  today: readonly RecordSummary[],
  before: string | undefined,
): Promise<string | null> {
  const captured = captures ? (await store.listCaptures(route, { limit: 1 }))[0]?.receivedAt : undefined;
  const recorded = today.map((record) => record.createdAt);
  return (
    [captured, before, ...recorded]
      .filter((at): at is string => at !== undefined)
      .sort()
      .at(-1) ?? null
  );
}

async function limitUses(
  store: MessageStore,
  route: string,
  limits:
    | {
        readonly messages?: number;
        readonly window: number;
        readonly creditsPerDay?: number;
        readonly creditsPerMonth?: number;
      }
    | undefined,
  now: Date,
  timeZone: string,
  changedToday: readonly RecordSummary[],
): Promise<LimitUse[]> {
  if (limits?.messages === undefined && limits?.creditsPerDay === undefined && limits?.creditsPerMonth === undefined)
    return [];
  const month = limits.creditsPerMonth === undefined ? undefined : monthBounds(now, timeZone);
  const usage = await store.limitUsage({
    route,
    ...(limits.messages === undefined ? {} : { messagesWindowSeconds: limits.window }),
    ...(month === undefined ? {} : { month }),
    now,
    changedToday,
  });
  const uses: LimitUse[] = [];
  if (limits.messages !== undefined && usage.messages !== undefined) {
    uses.push({
      kind: 'messages',
      used: usage.messages.used,
      max: limits.messages,
      windowEndsAt: usage.messages.windowEndsAt,
    });
  }
  if (limits.creditsPerDay !== undefined) {
    const endOfDay = new Date(`${usage.day.day}T00:00:00.000Z`).getTime() + DAY_MS;
    uses.push({
      kind: 'credits',
      used: usage.day.reserved,
      spent: usage.day.spent,
      max: limits.creditsPerDay,
      windowEndsAt: new Date(endOfDay).toISOString(),
    });
  }
  if (limits.creditsPerMonth !== undefined && usage.month !== undefined) {
    uses.push({
      kind: 'month',
      used: usage.month.reserved,
      spent: usage.month.spent,
      max: limits.creditsPerMonth,
      windowEndsAt: usage.month.endsAt,
    });
  }
  return uses;
}

/** A mute as the card and the mute buttons show it. */
export function muteView(mute: Mute | undefined, timeZone: string, now: Date): MuteView | null {
  if (mute === undefined) return null;
  return {
    until: mute.until,
    reason: mute.reason,
    untilLocal: clockTime(new Date(mute.until), timeZone, now),
    timeZone,
  };
}

async function heartbeatView(
  store: MessageStore,
  route: string,
  heartbeat: { readonly every: number; readonly grace: number },
): Promise<RouteSummary['heartbeat']> {
  const state = await store.getHeartbeat(route);
  return {
    every: heartbeat.every,
    grace: heartbeat.grace,
    lastSeenAt: state.lastSeenAt ?? null,
    silentSince: state.silentSince ?? null,
  };
}

/**
 * The credit over `days`: every send's `remainingBalance` and every balance read, the threshold
 * and reserve, spend per route per day, and the days-left forecast with its figures (the same
 * computation as the low-balance SMS).
 */
export async function creditView(
  source: ConsoleSource,
  store: MessageStore,
  days: number,
  now: Date,
): Promise<CreditAnswer> {
  const since = new Date(now.getTime() - days * DAY_MS);
  const shownDays = Math.min(days, MAX_CREDIT_DAYS);
  // Bounded whatever the volume: the newest sends' index entries (one partition, newest first, no
  // record read), the readings, and one counter item a day for the spend per route.
  const [state, sent, readings, { days: spentDays }, parked] = await Promise.all([
    store.getBalanceState(),
    store.summarizeRecent({ state: MessageState.Sent, since, limit: MAX_BALANCE_POINTS }),
    store.listBalanceReadings({ since, now }),
    store.recentSpend(shownDays, now),
    // From the index's own entries, like the sends: one more than counted says there are others.
    store.summarizeRecent({ state: MessageState.Parked, since: new Date(0), limit: ATTENTION_PAGE + 1 }),
  ]);
  const points = [
    ...sent.flatMap((record) =>
      record.remainingBalance === undefined
        ? []
        : [{ at: record.sentAt ?? record.updatedAt, balance: record.remainingBalance, kind: 'send' as const }],
    ),
    ...readings.map((reading) => ({ at: reading.at, balance: reading.balance, kind: 'read' as const })),
  ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  // The newest of every balance learned: the balance state also takes the read after an
  // insufficient-balance answer (or 0 when that read fails), which is no send and no reading.
  const latest = points.at(-1);
  const observedLater =
    state.lastBalance !== undefined &&
    state.lastCheckedAt !== undefined &&
    (latest === undefined || state.lastCheckedAt > latest.at);
  const balance = observedLater ? state.lastBalance! : (latest?.balance ?? state.lastBalance ?? null);
  const balanceAt = observedLater ? state.lastCheckedAt! : (latest?.at ?? state.lastCheckedAt ?? null);

  const routeIds = new Set([...source.loaded.routes.keys(), NOTICE_ROUTE]);
  const spend = spentDays
    .flatMap(({ day, routes }) =>
      Object.entries(routes)
        .filter(([route, credits]) => routeIds.has(route) && credits > 0)
        .map(([route, credits]) => ({ day, route, credits })),
    )
    .sort((a, b) => (a.day === b.day ? a.route.localeCompare(b.route) : a.day < b.day ? -1 : 1));

  // The forecast reads the day counters, as the balance watch's does: the same figures as the SMS.
  const forecast =
    balance === null ? { spent: 0, days: 0 } : await forecastBalance(store, balance, state.firstObservedAt, now);
  const balanceConfig = source.loaded.settings.balance;
  const currency =
    readings.findLast((reading) => reading.currency !== undefined)?.currency ?? balanceCurrency(source.loaded);
  return {
    currency,
    balance,
    balanceAt,
    threshold: balanceConfig?.threshold ?? null,
    reserve: balanceConfig === undefined || balanceConfig.reserve === 0 ? null : balanceConfig.reserve,
    points,
    spend,
    forecast: {
      daysLeft: forecast.daysLeft ?? null,
      spent: forecast.spent,
      days: forecast.days,
      perDay: forecast.perDay ?? null,
      firstObservedAt: state.firstObservedAt ?? null,
      basis: forecastBasis(forecast, balance, state.firstObservedAt),
    },
    creditsPerUnit: state.creditsPerUnit ?? null,
    parked: { count: Math.min(parked.length, ATTENTION_PAGE), more: parked.length > ATTENTION_PAGE },
  };
}

function forecastBasis(
  forecast: { readonly spent: number; readonly days: number; readonly perDay?: number; readonly daysLeft?: number },
  balance: number | null,
  firstObservedAt: string | undefined,
): string {
  if (balance === null) return 'No balance seen yet: the balance watch has not run and nothing was sent.';
  if (forecast.days * DAY_MS < MIN_FORECAST_MS)
    return `Less than an hour of history${firstObservedAt === undefined ? '' : ' since the first balance seen'}: too little to forecast.`;
  const span = forecast.days >= 1 ? `${round(forecast.days)} days` : `${round(forecast.days * 24)} hours`;
  if (forecast.perDay === undefined)
    return `Nothing spent in the last ${span}: the balance lasts as long as nothing is sent.`;
  return `${round(forecast.spent)} credits spent in the last ${span} (${round(forecast.perDay)} a day); ${round(balance)} left lasts about ${forecast.daysLeft} days at that rate.`;
}

function round(value: number): string {
  return new Intl.NumberFormat('en', { maximumFractionDigits: 1 }).format(value);
}
