import type { CompiledRoute, LoadedConfig } from '../core/config/compile';
import type { RelayConfigView } from '../core/config/view';
import { PAGING } from '../core/defaults';
import { partPrefix } from '../core/fitting';
import { actionDueNow, type Incident, IncidentState, levelAfter, pagingAction } from '../core/paging/incident';
import { ackLink, fitWithLink } from '../core/paging/link';
import type { Evaluation, PlannedMessage, SkippedItem } from '../core/pipeline/evaluate';
import { Verdict } from '../core/pipeline/verdict';
import { maskMsisdn, resolveRecipients } from '../core/recipients';
import type { CompiledRecipients } from '../core/recipients/types';
import type { InboundWebhook } from '../core/sources/types';
// The module itself, not the templates' index: the sweeper bundles this file and must not carry LiquidJS.
import { buildScope } from '../core/templates/scope';
import { fitMessage } from '../core/fitting';
import { field } from '../core/sources/body';
import { AcceptOutcome, MessageState, type MessageStore, type NewMessage } from '../store';
import { deferralOf, type DigestStore } from './digest';
import { mutedReason } from './mutes';
import { overridesFor } from './oncall';
import { errorName } from './error-name';
import { forEachConcurrently } from './concurrency';
import { RelayMetric, type RelayContext } from './ports';

/** What paging (incidents, escalations, renotifies) uses of the store. */
export type PagingStore = Pick<
  MessageStore,
  | 'openIncident'
  | 'openIncidentOf'
  | 'listOpenIncidents'
  | 'advanceIncident'
  | 'noteIncident'
  | 'closeIncident'
  | 'ackToken'
  | 'activeOverrides'
  | 'acceptWebhook'
  // A duplicate's accepted records say whether the incident it opened is the one they page for.
  | 'getMessage'
> &
  // An escalation due while the route is muted or in quiet hours is held as a new message would be.
  DigestStore;

/** Who a webhook's SMS of a route with paging are for, masked, for an incident's story. */
const masked = (numbers: readonly string[]): string => numbers.map(maskMsisdn).join(', ');

/**
 * The incident side of one webhook of a route with paging, called by ingest for a webhook that
 * sends or that the route's filter dropped: a resolved webhook closes the open incident of its key;
 * a firing one that sends opens it (unless `mayOpen` is false: a muted route, quiet hours, a digest
 * window) (a repeat finds the open one and
 * changes nothing of its escalation). With `ack`, the SMS become one per recipient, each ending
 * with that recipient's acknowledge link. Returns the evaluation to record.
 *
 * @example
 * ```ts
 * if (route.paging !== undefined) evaluation = await pageIncident(context, route, request, evaluation, { mayOpen: muted === undefined });
 * ```
 */
export async function pageIncident(
  context: RelayContext<LoadedConfig, PagingStore>,
  route: CompiledRoute,
  request: InboundWebhook,
  evaluation: Evaluation,
  { mayOpen }: { readonly mayOpen: boolean },
): Promise<PagedEvaluation> {
  const paging = route.paging;
  if (paging === undefined) return evaluation;
  const body = route.pack.parse(request);
  // A fan-out route opens an incident per item: its `incident:` key and condition read `item`.
  const fanOut = route.config.fanOut;
  const items = fanOut === undefined ? [undefined] : field(body, ...fanOut.split('.'));
  if (!Array.isArray(items)) return evaluation;
  const opened: string[] = [];
  const paged = new Map<number, string>();
  const quiet: SkippedItem[] = [];
  let messages: readonly PlannedMessage[] = evaluation.messages;
  for (let index = 0; index < items.length; index += 1) {
    const scope = buildScope({
      body,
      headers: request.headers,
      query: request.query,
      ...(fanOut === undefined ? {} : { extra: { item: items[index] } }),
    });
    const own = evaluation.messages.filter((message) => message.item === index);
    const outcome = await pageItem(context, route, paging, scope, own, request.receivedAt, mayOpen);
    if (outcome.opened !== undefined) opened.push(outcome.opened);
    if (outcome.incident !== undefined) paged.set(index, outcome.incident);
    if (outcome.quiet !== undefined) {
      quiet.push({ item: index, verdict: Verdict.Dropped, reason: outcome.quiet, text: unsplit(own) });
      messages = messages.filter((message) => message.item !== index);
    } else if (outcome.linked !== undefined)
      messages = [
        ...messages.filter((message) => message.item !== index),
        ...outcome.linked.map((message) => ({ ...message, item: index })),
      ];
  }
  const silenced =
    quiet.length === 0
      ? {}
      : {
          skipped: [...evaluation.skipped, ...quiet],
          ...(messages.length === 0 ? { verdict: Verdict.Dropped, reason: quiet[0]!.reason } : {}),
        };
  return {
    ...evaluation,
    ...silenced,
    messages: [...messages]
      .sort((a, b) => a.item - b.item)
      .map((message) => {
        const incident = paged.get(message.item);
        return incident === undefined ? message : { ...message, incident };
      }),
    ...(opened.length === 0 ? {} : { openedIncidents: opened }),
  };
}

/** One item's incident (the whole webhook's without fan-out): closed by a resolve, else opened (or found open) by its SMS. */
async function pageItem(
  context: RelayContext<LoadedConfig, PagingStore>,
  route: CompiledRoute,
  paging: NonNullable<CompiledRoute['paging']>,
  scope: ReturnType<typeof buildScope>,
  own: readonly PlannedMessage[],
  now: Date,
  mayOpen: boolean,
): Promise<{
  readonly opened?: string;
  readonly incident?: string;
  readonly linked?: PlannedMessage[];
  /** Why the item sends nothing: a repeat of an open incident whose source deduplicates by key. */
  readonly quiet?: string;
}> {
  const key = route.engine.render(paging.key, scope, { trackMissing: false }).text.trim();
  if (key === '') {
    context.logger.warn('incident key rendered empty: no incident for this webhook', { route: route.id });
    return {};
  }
  if (route.engine.evaluate(paging.resolved, scope)) {
    const open = await context.store.openIncidentOf(route.id, key);
    if (open !== undefined) {
      const closed = await context.store.closeIncident(open.id, {
        state: IncidentState.Resolved,
        by: `a ${route.pack.name} webhook`,
        now,
      });
      if (closed.closed) context.logger.info('incident resolved', { route: route.id, incident: open.id });
    }
    return {};
  }
  if (!mayOpen || own.length === 0) return {};
  const text = unsplit(own);
  const recipients = [...new Set(own.flatMap((message) => message.to))];
  const critical = own.some((message) => message.critical === true);
  const first = pagingAction(paging, now, 0);
  // Fixed now, while the request says where the relay is: the sweeper sends the later SMS without one.
  const origin = paging.ack === undefined ? undefined : (paging.ack.baseUrl ?? context.publicUrl);
  const { opened, incident } = await context.store.openIncident({
    route: route.id,
    key,
    text,
    sentTo: masked(recipients),
    recipients,
    ...(first === undefined ? {} : { nextDueAt: first.dueAt }),
    ...(origin === undefined ? {} : { linkOrigin: origin }),
    ...(critical ? { critical } : {}),
    now,
  });
  if (opened)
    context.logger.info('incident opened', {
      route: route.id,
      incident: incident.id,
      ...(first === undefined ? {} : { nextDueAt: first.dueAt.toISOString() }),
    });
  else if (route.pack.incident?.quietRepeats === true) {
    // The sender deduplicates by the key itself (Opsgenie by alias): the same alert again, not a reminder.
    await context.store.noteIncident(
      incident.id,
      { event: 'repeated', detail: 'fired again; no SMS (the same alert)' },
      now,
    );
    return { incident: incident.id, quiet: `a repeat of open incident ${incident.id}: no second SMS` };
  } else if (incident.state === IncidentState.Acknowledged) {
    // The source repeats an alert that still fires: the acknowledgement holds (its escalation stays
    // stopped); the SMS goes out as the route says, without a link, as there is nothing to acknowledge.
    await context.store.noteIncident(
      incident.id,
      { event: 'repeated', detail: 'fired again while acknowledged; escalation stays stopped' },
      now,
    );
    return {};
  } else
    await context.store.noteIncident(
      incident.id,
      { event: 'repeated', detail: 'fired again; escalation unchanged' },
      now,
    );
  const mark = { ...(opened ? { opened: incident.id } : {}), incident: incident.id };
  if (paging.ack === undefined) return mark;
  // The linked SMS replace the item's own: they keep what the alert asked of the credit reserve.
  const linked = (await linkedMessages(context, route, incident, text, recipients, now))?.map((message) =>
    critical ? { ...message, critical: true as const } : message,
  );
  return { ...mark, ...(linked === undefined ? {} : { linked }) };
}

/** A planned SMS of a route with paging: the incident it pages for, when its incident is open. */
export interface PagedMessage extends PlannedMessage {
  readonly incident?: string;
}

/** An evaluation after {@link pageIncident}: its SMS tagged with their incident, and the incidents it opened. */
export interface PagedEvaluation extends Evaluation {
  readonly messages: readonly PagedMessage[];
  /** The incidents it opened (one per fan-out item at most). */
  readonly openedIncidents?: readonly string[];
}

/**
 * Undoes an incident that a webhook opened when the accept then found the webhook a duplicate (a
 * sender's retry after the first delivery's incident resolved): the SMS are the first delivery's,
 * which page for another incident, so this one closes at once rather than escalate something nobody
 * was sent. Unless the accepted records page for it: two deliveries raced, the other found the
 * incident this one opened and won the accept, and its SMS carry this incident's link. That
 * incident is live and is left open.
 */
export async function discardOpenedIncident(
  context: RelayContext<LoadedConfig, PagingStore>,
  evaluation: PagedEvaluation,
  accepted: readonly string[],
  now: Date,
): Promise<void> {
  const opened = evaluation.openedIncidents ?? [];
  if (opened.length === 0) return;
  const records = await Promise.all(accepted.map(async (id) => await context.store.getMessage(id)));
  const live = new Set(records.map((record) => record?.incident));
  for (const id of opened.filter((each) => !live.has(each)))
    await context.store.closeIncident(id, {
      state: IncidentState.Resolved,
      by: 'a duplicate delivery (nothing sent)',
      now,
    });
}

/** One text back from its split parts (their `(i/n) ` prefixes removed). */
function unsplit(parts: readonly PlannedMessage[]): string {
  return parts
    .map((part) => (part.parts > 1 ? part.text.slice(partPrefix(part.part, part.parts).length) : part.text))
    .join(' ');
}

/**
 * One SMS per recipient, each ending with its own acknowledge link; `undefined` when no link origin
 * is known. The origin is the incident's own (fixed when it opened), so an escalation the sweeper
 * sends links where the first SMS did; an incident opened before origins were kept falls back to
 * the route's `ack.baseUrl`, then the relay's own URL when it knows it (locally).
 */
async function linkedMessages(
  context: RelayContext<RelayConfigView, PagingStore>,
  route: CompiledRoute,
  incident: Pick<Incident, 'id' | 'linkOrigin'>,
  text: string,
  recipients: readonly string[],
  now: Date,
): Promise<PlannedMessage[] | undefined> {
  const origin = incident.linkOrigin ?? route.paging?.ack?.baseUrl ?? context.publicUrl;
  if (origin === undefined) {
    context.logger.warn(
      'acknowledge link left out: the incident keeps no link origin, the route names no ack.baseUrl and the relay does not know its own URL',
      { route: route.id, incident: incident.id },
    );
    return undefined;
  }
  return await Promise.all(
    recipients.map(async (number) => {
      const token = await context.store.ackToken(incident.id, number, now);
      const part = fitWithLink(text, ackLink(origin, token));
      if (part === undefined) throw new Error(`the acknowledge link of route ${route.id} leaves no room for the text`);
      return {
        item: 0,
        part: 1,
        parts: 1,
        to: [number],
        text: part.text,
        senderId: route.senderId,
        encoding: part.encoding,
        characters: part.characters,
        segments: part.segments,
      };
    }),
  );
}

/** Options of {@link recordEscalations}. */
export interface EscalationOptions {
  /** The compiled config, where the context's is a view without recipients (the Lambda sweeper's). */
  readonly compile?: () => Promise<LoadedConfig>;
  /**
   * Publish the gauges (`IncidentsUnacknowledged`, `IncidentsOverdue`): once per sweep, not at each
   * pass of a run that stays for the steps due later.
   * @default true
   */
  readonly gauges?: boolean;
  /**
   * Incidents left alone in this pass: those whose step failed earlier in the same run, which the
   * next sweep tries again instead of every pass of this one.
   * @default - none
   */
  readonly skip?: ReadonlySet<string>;
}

function isCompiled(config: RelayConfigView): config is LoadedConfig {
  for (const route of config.routes.values()) if (!('engine' in route)) return false;
  return true;
}

/** What one escalation run did. */
export interface EscalationReport {
  /** The records of the escalation and renotify SMS recorded (PENDING): the sweeper hands them to the sender. */
  readonly ids: readonly string[];
  /** Open incidents past their last step, neither acknowledged nor resolved. */
  readonly unacknowledged: number;
  /** Open incidents whose next step is more than `PAGING.overdueAfterMs` past due after this pass. */
  readonly overdue: number;
  /** The incidents whose step could not be recorded in this pass (counted in `EscalationErrors`). */
  readonly failed: readonly string[];
  /** The earliest step still to come of the open incidents (failed ones aside): when to look again. */
  readonly nextDueAt?: Date;
}

/** Short UTC time of a step for the timeline: `14:12 UTC`. */
const shortTime = (at: Date): string => `${at.toISOString().slice(11, 16)} UTC`;

/**
 * The sweeper's paging step: for each open incident whose next escalation or renotify is due,
 * records its SMS (one record per recipient with `ack`, under the dedupe key of the incident and
 * the step, so a second sweeper or a retry after a crash records nothing new) and then claims the
 * step with a conditional write, which also sets the next due time. Steps missed while the relay
 * was not running are collapsed into the latest one due (see `actionDueNow`). The SMS goes through
 * the sender like any message of the route: its limits and, for a critical route, the credit
 * reserve. Publishes `EscalationsSent`, `EscalationErrors` (a step not recorded, or whose SMS can
 * never go) and the `IncidentsUnacknowledged` and `IncidentsOverdue` gauges.
 *
 * @example
 * ```ts
 * const { ids } = await recordEscalations(context, now);
 * dispatch?.(ids);
 * ```
 */
export async function recordEscalations(
  context: RelayContext<RelayConfigView, PagingStore>,
  now: Date,
  { compile, gauges = true, skip }: EscalationOptions = {},
): Promise<EscalationReport> {
  const { store, logger, metrics } = context;
  const ids: string[] = [];
  const failed: string[] = [];
  let unacknowledged = 0;
  let overdue = 0;
  let nextDue: number | undefined;
  const upcoming = (at: Date | undefined): void => {
    if (at !== undefined) nextDue = Math.min(nextDue ?? Number.POSITIVE_INFINITY, at.getTime());
  };
  const countOverdue = (dueAt: Date | string | undefined): void => {
    const due = dueAt === undefined ? Number.NaN : new Date(dueAt).getTime();
    if (now.getTime() - due > PAGING.overdueAfterMs) overdue += 1;
  };
  const publish = (): EscalationReport => {
    if (gauges) {
      metrics.add(RelayMetric.IncidentsUnacknowledged, unacknowledged);
      metrics.add(RelayMetric.IncidentsOverdue, overdue);
    }
    return { ids, unacknowledged, overdue, failed, ...(nextDue === undefined ? {} : { nextDueAt: new Date(nextDue) }) };
  };
  const incidents = await store.listOpenIncidents();
  if (incidents.length === 0) return publish();
  const compiled = isCompiled(context.config) ? context.config : await compile?.();
  const routes = compiled?.routes;
  // Who each number is, for the terminal's `escalation 1 → baraka`: a name of `people`, else masked.
  const names = new Map([...(compiled?.onCall?.people.values() ?? [])].map((person) => [person.number, person.name]));
  const whom = (numbers: readonly string[]): string[] =>
    numbers.map((number) => names.get(number) ?? maskMsisdn(number));
  if (routes === undefined)
    throw new Error('escalations need the compiled config (its recipients): pass the compiler to the sweep');
  // A few at a time: steps falling due together (a burst of alerts) must not queue behind each other.
  await forEachConcurrently(incidents, PAGING.concurrency, async (incident) => {
    const route = routes.get(incident.route);
    const paging = route?.paging;
    // A step nobody will take (the route or its paging gone from the config) is still overdue.
    if (route === undefined || paging === undefined) {
      countOverdue(incident.nextDueAt);
      return;
    }
    const openedAt = new Date(incident.openedAt);
    const next = pagingAction(paging, openedAt, incident.actions);
    if (next === undefined) {
      if (paging.steps.length > 0 || paging.renotify !== undefined) unacknowledged += 1;
      return;
    }
    if (skip?.has(incident.id)) {
      countOverdue(next.dueAt);
      return;
    }
    const due = actionDueNow(paging, openedAt, incident.actions, now, PAGING.missedAfterMs);
    if (due === undefined) {
      upcoming(next.dueAt);
      return;
    }
    try {
      const { index, action, skipped } = due;
      const numbers = await stepRecipients(store, route, incident, action.step, now);
      // A route muted or in quiet hours since the incident opened sends nothing now: the step's SMS
      // are recorded DROPPED with the mute's reason (DEFERRED to the digest in quiet hours), the
      // step is taken and the incident stays open for the steps after.
      const held = await heldNow(context, route, now);
      const messages = (await escalationMessages(context, route, incident, numbers, now)).map((message) =>
        held === undefined || message.state === MessageState.Dropped ? message : { ...message, ...held },
      );
      const result = await store.acceptWebhook({
        route: route.id,
        dedupeKey: `incident:${incident.id}:${index}`,
        windowSeconds: PAGING.keptSeconds,
        messages,
        now,
        retentionDays: context.config.settings.retentionDays,
      });
      const after = pagingAction(paging, openedAt, index + 1);
      const verb = action.kind === 'escalate' ? 'escalated' : 'renotified';
      const missed =
        skipped.length === 0
          ? ''
          : ` (missed while the relay was not running, skipped: the step${skipped.length === 1 ? '' : 's'} due ${skipped.map((each) => shortTime(each.dueAt)).join(', ')})`;
      const claimed = await store.advanceIncident(incident.id, {
        fromActions: incident.actions,
        toActions: index + 1,
        level: levelAfter(paging, index + 1),
        ...(after === undefined ? {} : { nextDueAt: after.dueAt }),
        entry: {
          event: verb,
          detail: `${verb} to ${masked(numbers)}${held === undefined ? '' : ` (not sent: ${held.reason})`}${missed}`,
          ids: result.ids,
        },
        now,
      });
      if (result.outcome !== AcceptOutcome.Duplicate) {
        metrics.add(RelayMetric.EscalationsSent, numbers.length > 0 && held === undefined ? 1 : 0, route.id);
        // Nobody to text, or a text that cannot fit: the step is taken but its SMS can never go.
        if (held === undefined && messages.every((message) => message.state === MessageState.Dropped))
          metrics.add(RelayMetric.EscalationErrors, 1, route.id);
      }
      if (claimed)
        logger.info(`incident ${verb}`, {
          route: route.id,
          incident: incident.id,
          step: index + 1,
          ...(skipped.length === 0 ? {} : { skipped: skipped.length }),
          to: numbers.map(maskMsisdn),
          people: whom(numbers),
          ids: result.ids,
        });
      upcoming(after?.dueAt);
      ids.push(...result.ids);
    } catch (error) {
      failed.push(incident.id);
      countOverdue(next.dueAt);
      metrics.add(RelayMetric.EscalationErrors, 1, route.id);
      logger.error('escalation not recorded; the next sweep tries again', {
        step: 'escalations',
        route: route.id,
        incident: incident.id,
        error: errorName(error),
      });
    }
  });
  return publish();
}

/**
 * Who an escalation or renotify tells: the step's recipients, resolved now (its `oncall:` is who is
 * on call when it is due); before any step, the people the first SMS went to. The route's own
 * recipients may be templates of the webhook, which the sweeper does not have.
 */
async function stepRecipients(
  store: PagingStore,
  route: CompiledRoute,
  incident: Incident,
  step: number,
  now: Date,
): Promise<readonly string[]> {
  if (step < 0 && incident.recipients !== undefined && incident.recipients.length > 0) return incident.recipients;
  const to: CompiledRecipients = step >= 0 ? route.paging!.steps[step]!.to : route.recipients;
  const overrides = await overridesFor(store, { recipients: to }, now);
  return resolveRecipients(to, buildScope({ body: {} }), { at: now, overrides }).numbers;
}

/** Why an escalation of `route` is not sent now: the route's mute (DROPPED), else its quiet hours or digest window (DEFERRED to the digest). */
async function heldNow(
  context: RelayContext<RelayConfigView, PagingStore>,
  route: CompiledRoute,
  now: Date,
): Promise<(Pick<NewMessage, 'state' | 'reason' | 'nextAttemptAt'> & { readonly reason: string }) | undefined> {
  const mute = await context.store.getMute({ route: route.id, now });
  if (mute !== undefined) return { state: MessageState.Dropped, reason: mutedReason(route, mute, now) };
  const deferral = await deferralOf(context, route, now);
  return deferral === undefined
    ? undefined
    : { state: MessageState.Deferred, reason: deferral.reason, nextAttemptAt: deferral.until };
}

/**
 * The SMS of one escalation or renotify: with `ack`, one per recipient with its link; else one to
 * all. Those of a critical alert's incident are critical too (they may spend the credit reserve).
 */
async function escalationMessages(
  context: RelayContext<RelayConfigView, PagingStore>,
  route: CompiledRoute,
  incident: Pick<Incident, 'id' | 'text' | 'linkOrigin' | 'critical'>,
  numbers: readonly string[],
  now: Date,
): Promise<NewMessage[]> {
  const messages = await stepMessages(context, route, incident, numbers, now);
  return incident.critical === true
    ? messages.map((message) => (message.state === undefined ? { ...message, critical: true as const } : message))
    : messages;
}

async function stepMessages(
  context: RelayContext<RelayConfigView, PagingStore>,
  route: CompiledRoute,
  incident: Pick<Incident, 'id' | 'text' | 'linkOrigin'>,
  numbers: readonly string[],
  now: Date,
): Promise<NewMessage[]> {
  const { id: incidentId, text } = incident;
  const delivery = route.config.delivery;
  if (numbers.length === 0) {
    return [droppedMessage(0, 'no valid recipient for this escalation step', text, delivery)];
  }
  const linked =
    route.paging?.ack === undefined ? undefined : await linkedMessages(context, route, incident, text, numbers, now);
  if (linked !== undefined)
    return linked.map((message, index) => ({ ...toNewMessage(message, delivery), index, incident: incidentId }));
  const fitted = fitMessage(text, { policy: 'truncate' });
  if (!fitted.ok) return [droppedMessage(0, fitted.reason, text, delivery)];
  const part = fitted.parts[0]!;
  return [
    toNewMessage(
      {
        item: 0,
        part: 1,
        parts: 1,
        to: numbers,
        text: part.text,
        senderId: route.senderId,
        encoding: part.encoding,
        characters: part.characters,
        segments: part.segments,
        incident: incidentId,
      },
      delivery,
    ),
  ];
}

/** The record of an SMS that will never go out (no recipient, rejected, over a cap), with its reason. */
export function droppedMessage(
  index: number,
  reason: string,
  text: string,
  delivery: NewMessage['delivery'],
): NewMessage {
  return {
    index,
    part: 1,
    parts: 1,
    text,
    to: [],
    encoding: 'GSM-7',
    characters: text.length,
    segments: 0,
    delivery,
    state: MessageState.Dropped,
    reason,
  };
}

/** The record of one planned SMS, as ingest and the incident's own SMS write it. */
export function toNewMessage(message: PagedMessage, delivery: NewMessage['delivery']): NewMessage {
  return {
    index: message.item,
    part: message.part,
    parts: message.parts,
    text: message.text,
    to: message.to,
    ...(message.senderId === undefined ? {} : { senderId: message.senderId }),
    encoding: message.encoding,
    characters: message.characters,
    segments: message.segments,
    delivery,
    ...(message.incident === undefined ? {} : { incident: message.incident }),
    ...(message.critical === true ? { critical: true as const } : {}),
  };
}
