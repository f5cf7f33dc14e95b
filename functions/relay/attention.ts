import { currentReason, REASONS, REDRIVE_PARKED } from '../core/reasons';
import type { MessageRecord, MessageStore } from '../store';
// The store's modules, not its index: no store is built here, the caller passes its own.
import { STUCK_COUNT_CAP } from '../store/counts';
import { MessageState } from '../store/table';

/** What a person must act on, each kind once (a muted route: once per route). */
export const AttentionKind = {
  Parked: 'parked',
  Held: 'held',
  Unknown: 'unknown',
  Unreachable: 'unreachable',
  Muted: 'muted',
} as const;
export type AttentionKind = (typeof AttentionKind)[keyof typeof AttentionKind];

/** The states a Redrive of the whole item requeues from (UNKNOWN is each record's own decision). */
export type AttentionRedrive = typeof MessageState.Parked | typeof MessageState.Held;

/**
 * One thing SMS wait for a person to do: what, how many, since when, and the action. The terminal
 * prints `what: why, since <time>. action command`; the console's bar `what: why, since <time>.
 * action` and a button (Redrive) or a link in place of `command`. A muted route's `what` is
 * followed by `until <time>` (each viewer's own clock).
 */
export interface Attention {
  readonly kind: AttentionKind;
  /** SMS waiting (parked, held, unknown); a muted route: 1; the service: 0 (the SMS waiting PENDING are not counted). */
  readonly count: number;
  /** More wait than `count`: the store's cap (or, with `ids`, the page read) was reached; shown `100+`. */
  readonly more: boolean;
  /** ISO-8601 UTC: the oldest such record's last change, the circuit's opening, the mute's setting. */
  readonly since: string | null;
  /** What, in a few words: `2 SMS parked`, `100+ SMS held`, `Route alerts muted`. */
  readonly what: string;
  /** Why: `insufficient balance (balance 0 TZS)`, the oldest record's reason, a mute's reason. */
  readonly why: string;
  /** What the person does, in words: `Top up, then` (before the command or the button). */
  readonly action: string;
  /** The same, as the CLI says it: `run "npx sms-relay redrive --state PARKED"`. */
  readonly command: string;
  /** The state a Redrive of this item requeues `ids` from; `null`: no bulk redrive. */
  readonly redrive: AttentionRedrive | null;
  /** With the `ids` option, the records the Redrive requeues, oldest first; else empty. */
  readonly ids: readonly string[];
  /** A muted route: which, and until when (ISO-8601 UTC). */
  readonly route?: string;
  readonly until?: string;
}

/** What {@link needsAttention} reads of the store. */
export type AttentionStore = Pick<
  MessageStore,
  'countStuck' | 'listByState' | 'getCircuit' | 'listMutes' | 'getBalanceState'
>;

/** Options of {@link needsAttention}. */
export interface AttentionOptions {
  /**
   * The currency the balance is shown in (`balance 0 TZS`).
   * @default none: `balance 0`
   */
  readonly currency?: string;
  /**
   * List, per state, the oldest this many records a Redrive would requeue (the console's button),
   * and count them from those instead of the store's stuck counts: reads of the state index's
   * entries only, never a scan of the table, even on a store that otherwise scans (locally).
   * @default none: counts from `countStuck`, no ids
   */
  readonly ids?: number;
}

/** A park for want of credit, in today's words; `reserve` when only the reserve stopped it. */
function creditPark(reason: string | undefined): 'balance' | 'reserve' | undefined {
  const text = currentReason(reason ?? '');
  if (text.startsWith(REASONS.insufficientBalance.text)) return 'balance';
  if (text.startsWith(REASONS.balanceReserve.text)) return 'reserve';
  return undefined;
}

/**
 * What needs a person now, in a fixed order (parked, held, unknown, the service unreachable, each
 * muted route); empty when nothing does. Bounded reads whatever the volume: the store's capped
 * stuck counts (or, with `ids`, one page of the state index per state), the oldest record of each
 * counted state, the circuit, the mutes in force and the balance state. The terminal's attention
 * line and the console's bar both show this, in these words.
 *
 * @example
 * ```ts
 * for (const item of await needsAttention(store, new Date(), { currency: 'TZS' }))
 *   console.log(`${item.what}: ${item.why}. ${item.action} ${item.command}`);
 * ```
 */
export async function needsAttention(
  store: AttentionStore,
  now: Date,
  { currency, ids }: AttentionOptions = {},
): Promise<Attention[]> {
  // The oldest records of a state from the state index's entries, current from the table; an entry
  // a kill left naming a record now in another state is not counted (a redrive checks it anyway).
  const oldest = async (state: MessageState) => {
    const page = await store.listByState(state, { limit: ids ?? 1, candidatesFromIndex: true });
    return { items: page.items.filter((record) => record.state === state), more: page.cursor !== undefined };
  };
  const [counts, parked, held, unknown, circuit, mutes, balance] = await Promise.all([
    // Deferred digests are the sweeper's to send, not a person's: the cut-off only satisfies the call.
    ids === undefined ? store.countStuck({ overdueBefore: new Date(0) }) : undefined,
    oldest(MessageState.Parked),
    oldest(MessageState.Held),
    oldest(MessageState.Unknown),
    store.getCircuit(),
    store.listMutes({ now }),
    store.getBalanceState(),
  ]);
  const counted = (
    page: { readonly items: readonly MessageRecord[]; readonly more: boolean },
    stuck: number | undefined,
  ) => {
    const count = ids === undefined ? (stuck ?? 0) : page.items.length;
    return {
      count,
      more: ids === undefined ? count >= STUCK_COUNT_CAP : page.more,
      since: page.items[0]?.updatedAt ?? null,
      ids: ids === undefined ? [] : page.items.map((record) => record.id),
      oldest: page.items[0],
    };
  };
  const howMany = ({ count, more }: { count: number; more: boolean }): string => `${count}${more ? '+' : ''}`;
  const items: Attention[] = [];

  const parking = counted(parked, counts?.parked);
  if (parking.count > 0) {
    const credit = creditPark(parking.oldest?.reason);
    const known =
      balance.lastBalance === undefined
        ? ''
        : ` (balance ${balance.lastBalance}${currency === undefined ? '' : ` ${currency}`})`;
    const { oldest: _, ...shown } = parking;
    items.push({
      kind: AttentionKind.Parked,
      ...shown,
      what: `${howMany(parking)} SMS parked`,
      why:
        credit === undefined
          ? currentReason(parking.oldest?.reason ?? 'parked')
          : `${credit === 'balance' ? REASONS.insufficientBalance.text : REASONS.balanceReserve.text}${known}`,
      action: credit === undefined ? 'When the cause is fixed,' : 'Top up, then',
      command: `run "${REDRIVE_PARKED}"`,
      redrive: MessageState.Parked,
    });
  }
  const holding = counted(held, counts?.held);
  if (holding.count > 0) {
    const { oldest: first, ...shown } = holding;
    items.push({
      kind: AttentionKind.Held,
      ...shown,
      what: `${howMany(holding)} SMS held`,
      why: first?.reason ?? 'held by a route limit',
      action: 'Raise the limit or wait for its window, then',
      command: 'run "npx sms-relay redrive --state HELD"',
      redrive: MessageState.Held,
    });
  }
  const unsure = counted(unknown, counts?.unknown);
  if (unsure.count > 0) {
    const { oldest: _, ...shown } = unsure;
    items.push({
      kind: AttentionKind.Unknown,
      ...shown,
      // Each needs its own decision (a redrive may send a duplicate): no bulk Redrive.
      ids: [],
      what: `${howMany(unsure)} SMS UNKNOWN`,
      why: 'maybe sent, maybe not',
      action: "Check the SMS service's log, then redrive or dismiss each:",
      command: '"npx sms-relay redrive --state UNKNOWN --accept-duplicates" or "npx sms-relay dismiss"',
      redrive: null,
    });
  }
  if (circuit.openedAt !== undefined)
    items.push({
      kind: AttentionKind.Unreachable,
      count: 0,
      more: false,
      since: circuit.openedAt ?? null,
      what: 'SMS service unreachable',
      why: `SMS wait PENDING${circuit.lastError === undefined ? '' : ` (last ${circuit.lastError})`}`,
      action: 'Check the service and the network; sends resume by themselves when it answers:',
      command: '"npx sms-relay circuit"',
      redrive: null,
      ids: [],
    });
  for (const mute of mutes)
    items.push({
      kind: AttentionKind.Muted,
      count: 1,
      more: false,
      since: mute.mutedAt,
      what: `Route ${mute.route} muted`,
      why: mute.reason === '' ? 'no reason given' : mute.reason,
      action: 'Its SMS are dropped until then; unmute it when ready:',
      command: `"npx sms-relay unmute ${mute.route}"`,
      redrive: null,
      ids: [],
      route: mute.route,
      until: mute.until,
    });
  return items;
}
