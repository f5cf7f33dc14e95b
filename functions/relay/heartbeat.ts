import { literalRecipients, type RelayConfigView, type RouteView } from '../core/config/view';
import { HEARTBEAT_TOUCH_MAX_MS } from '../core/defaults';
import { clockTime, formatSeconds, formatSpan } from '../core/local-time';
import { type MessageStore, NoticeKind } from '../store';
import { noticeMessage } from './notice';
import type { RelayContext } from './ports';
import type { LoadedConfig } from '../core/config/compile';

/** What the routes' dead-man's switches use of the store. */
export type HeartbeatStore = Pick<
  MessageStore,
  'touchHeartbeat' | 'getHeartbeat' | 'armHeartbeat' | 'heartbeat' | 'getMute' | 'recordNotice'
>;

/**
 * How often, at most, a route's "last seen" is written: every half `grace`, at most once a minute
 * (see `HEARTBEAT_TOUCH_MAX_MS`).
 */
export function touchIntervalMs(route: Pick<RouteView, 'config'>): number {
  const graceMs = (route.config.heartbeat?.grace ?? 0) * 1000;
  return Math.max(1_000, Math.min(HEARTBEAT_TOUCH_MAX_MS, Math.floor(graceMs / 2)));
}

/** This process's last write of each route's "last seen", per store: most webhooks cost no request. */
const lastTouched = new WeakMap<HeartbeatStore, Map<string, number>>();

/**
 * Notes an authenticated webhook on a route with a `heartbeat`. Cost per webhook: nothing when
 * this process wrote the route's "last seen" less than the touch interval ago (at most a minute);
 * otherwise one conditional write, which another process may have made already (a refused write
 * still costs one write unit). So a route costs at most one write per process and interval, not
 * one per webhook. Best effort: a failure is logged and the webhook is answered as usual (the next
 * webhook writes it).
 */
export async function touchHeartbeat(
  context: RelayContext<LoadedConfig, HeartbeatStore>,
  route: RouteView,
  now: Date,
): Promise<void> {
  if (route.config.heartbeat === undefined) return;
  const intervalMs = touchIntervalMs(route);
  let touched = lastTouched.get(context.store);
  if (touched === undefined) lastTouched.set(context.store, (touched = new Map()));
  const last = touched.get(route.id);
  if (last !== undefined && now.getTime() - last < intervalMs && now.getTime() >= last) return;
  touched.set(route.id, now.getTime());
  try {
    await context.store.touchHeartbeat({ route: route.id, intervalMs, now });
  } catch (error) {
    touched.delete(route.id);
    context.logger.error('heartbeat not recorded', {
      route: route.id,
      error: error instanceof Error ? error.name : typeof error,
    });
  }
}

/** What one sweep's heartbeat check recorded. */
export interface HeartbeatReport {
  /** Silence SMS recorded. */
  readonly silent: number;
  /** "Back" SMS recorded. */
  readonly back: number;
}

/**
 * The dead-man's switch, run by every sweep: for each route with a `heartbeat`, one SMS to its
 * literal recipients when no authenticated webhook arrived for `every + grace`, and one when they
 * resume. Each change is a conditional write that one of several racing sweepers wins, then the
 * SMS is recorded as a notice (once per route and silence), then marked recorded: a sweeper that
 * stops between the two leaves the SMS to the next sweep, never to two.
 *
 * A route never heard from counts its silence from the first sweep that saw its heartbeat. A muted
 * route is not reported silent while the mute lasts (the maintenance it was muted for is why).
 */
export async function checkHeartbeats(
  context: RelayContext<RelayConfigView, HeartbeatStore>,
  now: Date,
): Promise<HeartbeatReport> {
  let silent = 0;
  let back = 0;
  for (const route of context.config.routes.values()) {
    const heartbeat = route.config.heartbeat;
    if (heartbeat === undefined) continue;
    try {
      const outcome = await checkRoute(context, route, heartbeat, now);
      silent += outcome.silent;
      back += outcome.back;
    } catch (error) {
      // One route's failure must not stop the others; the next sweep looks again.
      context.logger.error('heartbeat check failed', {
        route: route.id,
        error: error instanceof Error ? error.name : typeof error,
      });
    }
  }
  return { silent, back };
}

async function checkRoute(
  context: RelayContext<RelayConfigView, HeartbeatStore>,
  route: RouteView,
  heartbeat: { readonly every: number; readonly grace: number },
  now: Date,
): Promise<HeartbeatReport> {
  const { store } = context;
  const state = await store.getHeartbeat(route.id);
  let silent = 0;
  let back = 0;
  // What an earlier sweep decided but did not get to record.
  if (state.silentSince !== undefined && state.silentNotified !== true) {
    await notifySilent(context, route, heartbeat, state.silentSince, now);
  }
  if (state.backSince !== undefined && state.backSeenAt !== undefined) {
    await notifyBack(context, route, state.backSince, state.backSeenAt, now);
  }

  const seen = state.lastSeenAt ?? state.armedAt;
  if (seen === undefined) {
    await store.armHeartbeat({ route: route.id, now });
    return { silent, back };
  }
  if (state.silentSince === undefined) {
    const silentMs = now.getTime() - Date.parse(seen);
    if (silentMs <= (heartbeat.every + heartbeat.grace) * 1000) return { silent, back };
    if ((await store.getMute({ route: route.id, now, consistent: true })) !== undefined) return { silent, back };
    if (await store.heartbeat.silent({ route: route.id, since: seen, now })) {
      await notifySilent(context, route, heartbeat, seen, now);
      silent += 1;
    }
  } else if (state.lastSeenAt !== undefined && state.lastSeenAt > state.silentSince) {
    if (await store.heartbeat.back({ route: route.id, since: state.silentSince, seenAt: state.lastSeenAt })) {
      await notifyBack(context, route, state.silentSince, state.lastSeenAt, now);
      back += 1;
    }
  }
  return { silent, back };
}

async function notifySilent(
  context: RelayContext<RelayConfigView, HeartbeatStore>,
  route: RouteView,
  heartbeat: { readonly every: number },
  since: string,
  now: Date,
): Promise<void> {
  const text = `sms-relay: nothing from route '${route.id}' since ${clockTime(new Date(since), route.config.timeZone, now)}, expected every ${formatSeconds(heartbeat.every)}`;
  await record(context, route, NoticeKind.HeartbeatSilent, since, text, now);
  await context.store.heartbeat.silentNotified({ route: route.id, since });
  context.logger.warn('heartbeat silent', { route: route.id, since });
}

async function notifyBack(
  context: RelayContext<RelayConfigView, HeartbeatStore>,
  route: RouteView,
  since: string,
  seenAt: string,
  now: Date,
): Promise<void> {
  const text = `sms-relay: route '${route.id}' is back after ${formatSpan(Date.parse(seenAt) - Date.parse(since))} (nothing from ${clockTime(new Date(since), route.config.timeZone, now)} to ${clockTime(new Date(seenAt), route.config.timeZone, now)})`;
  await record(context, route, NoticeKind.HeartbeatBack, since, text, now);
  await context.store.heartbeat.backNotified({ route: route.id, since });
  context.logger.info('heartbeat back', { route: route.id, since, seenAt });
}

/** Records the SMS once per route, kind and silence (the silence's start names it). */
async function record(
  context: RelayContext<RelayConfigView, HeartbeatStore>,
  route: RouteView,
  kind: NoticeKind,
  since: string,
  text: string,
  now: Date,
): Promise<void> {
  const to = literalRecipients(route);
  // `validate` refuses a heartbeat without a literal recipient; a config that slipped past says so here.
  if (to.length === 0) {
    context.logger.error('heartbeat SMS has no recipient', { route: route.id, kind });
    return;
  }
  await context.store.recordNotice({
    kind,
    route: route.id,
    key: `${route.id}:${since}`,
    now,
    retentionDays: context.config.settings.retentionDays,
    message: noticeMessage(text, to, route.senderId),
  });
}
