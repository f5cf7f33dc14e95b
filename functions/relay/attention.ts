import { REASONS, REDRIVE_PARKED } from '../core/reasons';
import type { MessageStore } from '../store';
// The table's constants only, so the module stays light for the CLI and the console.
import { MessageState } from '../store/table';

/** What a person must act on, each kind once. */
export const AttentionKind = {
  Parked: 'parked',
  Held: 'held',
  Unknown: 'unknown',
  Unreachable: 'unreachable',
  Muted: 'muted',
} as const;
export type AttentionKind = (typeof AttentionKind)[keyof typeof AttentionKind];

/** One thing SMS wait for a person to do: what, how many, since when, and the action. */
export interface Attention {
  readonly kind: AttentionKind;
  /** SMS waiting (parked, held, unknown); routes muted; for the service, the SMS waiting PENDING is not counted: 0. */
  readonly count: number;
  /** ISO-8601 UTC: the oldest such record's last change, the circuit's opening, the earliest mute. */
  readonly since: string | null;
  /** What, in words: `8 SMS parked: insufficient balance (balance 0)`. */
  readonly what: string;
  /** What to do: `top up, then run "npx sms-relay redrive --state PARKED"`. */
  readonly action: string;
}

/** What {@link needsAttention} reads of the store. */
export type AttentionStore = Pick<
  MessageStore,
  'countStuck' | 'listByState' | 'getCircuit' | 'listMutes' | 'getBalanceState'
>;

/**
 * What needs a person now, in a fixed order (parked, held, unknown, the service unreachable, muted
 * routes); empty when nothing does. Bounded reads: the store's capped stuck counts, the oldest
 * record of each counted state, the circuit, the mutes in force and the balance state. The
 * terminal's attention line and the console's bar both show this.
 *
 * @example
 * ```ts
 * for (const item of await needsAttention(store, new Date())) console.log(`${item.what}. ${item.action}`);
 * ```
 */
export async function needsAttention(store: AttentionStore, now: Date): Promise<Attention[]> {
  const [counts, circuit, mutes, balance] = await Promise.all([
    // Deferred digests are the sweeper's to send, not a person's: the cut-off only satisfies the call.
    store.countStuck({ overdueBefore: new Date(0) }),
    store.getCircuit(),
    store.listMutes({ now }),
    store.getBalanceState(),
  ]);
  const oldest = async (state: MessageState): Promise<string | null> =>
    (await store.listByState(state, { limit: 1 })).items[0]?.updatedAt ?? null;
  const items: Attention[] = [];
  if (counts.parked > 0) {
    const known = balance.lastBalance === undefined ? '' : ` (balance ${balance.lastBalance})`;
    items.push({
      kind: AttentionKind.Parked,
      count: counts.parked,
      since: await oldest(MessageState.Parked),
      what: `${counts.parked} SMS parked: ${REASONS.insufficientBalance.text}${known}`,
      action: `Top up, then run "${REDRIVE_PARKED}"`,
    });
  }
  if (counts.held > 0)
    items.push({
      kind: AttentionKind.Held,
      count: counts.held,
      since: await oldest(MessageState.Held),
      what: `${counts.held} SMS held by a route limit`,
      action: 'Raise the limit or wait for its window, then run "npx sms-relay redrive --state HELD"',
    });
  if (counts.unknown > 0)
    items.push({
      kind: AttentionKind.Unknown,
      count: counts.unknown,
      since: await oldest(MessageState.Unknown),
      what: `${counts.unknown} SMS UNKNOWN: maybe sent, maybe not`,
      action:
        'Check the SMS service\'s log, then "npx sms-relay redrive --state UNKNOWN --accept-duplicates" or "npx sms-relay dismiss"',
    });
  if (circuit.openedAt !== undefined)
    items.push({
      kind: AttentionKind.Unreachable,
      count: 0,
      since: circuit.openedAt ?? null,
      what: `SMS service unreachable${circuit.lastError === undefined ? '' : ` (last ${circuit.lastError})`}: SMS wait PENDING`,
      action: 'Check the service and the network; sends resume by themselves when it answers ("npx sms-relay circuit")',
    });
  if (mutes.length > 0)
    items.push({
      kind: AttentionKind.Muted,
      count: mutes.length,
      since: mutes.map((mute) => mute.mutedAt).sort()[0] ?? null,
      what: `${mutes.length === 1 ? `route ${mutes[0]!.route} muted` : `${mutes.length} routes muted (${mutes.map((mute) => mute.route).join(', ')})`}: their SMS are dropped`,
      action: 'Unmute when ready: "npx sms-relay unmute <route>"',
    });
  return items;
}
