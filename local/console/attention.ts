/**
 * What needs a person now (`GET /attention`, the console's attention bar): SMS parked, held or
 * UNKNOWN, and routes muted. Each read is bounded: one page of the state index per state (the
 * oldest {@link ATTENTION_PAGE}), the mutes in force and the balance state, whatever the volume.
 *
 * The one module the console takes this summary from: when the CLI's shared summary lands, this is
 * the file to point at it.
 */
import { MessageState, type MessageStore } from '../../functions/store';
import { MAX_REDRIVE_IDS } from '../records/states';
import type { AttentionAnswer, AttentionItem } from './contract';

/** Records read per state: as many as one redrive request takes, so the button redrives what the bar counts. */
export const ATTENTION_PAGE = MAX_REDRIVE_IDS;

/** A park for want of credit; the sender's reason starts so. */
const INSUFFICIENT_BALANCE = /^insufficient balance/;

/**
 * The attention bar's items, most urgent first; none when nothing waits for a person.
 *
 * @example
 * ```ts
 * const { items } = await attentionView(store, { currency: 'TZS', now: new Date() });
 * ```
 */
export async function attentionView(
  store: Pick<MessageStore, 'listByState' | 'listMutes' | 'getBalanceState'>,
  { currency, now }: { readonly currency: string; readonly now: Date },
): Promise<AttentionAnswer> {
  // The state index's entries, not a scan of the table: the bar polls from every open page, and
  // locally a scan per state (10,000 records) kept the store's one thread from everything else.
  const oldest = async (state: MessageState) => {
    const page = await store.listByState(state, { limit: ATTENTION_PAGE, candidatesFromIndex: true });
    return { ...page, items: page.items.filter((record) => record.state === state) };
  };
  const [parked, held, unknown, mutes, balance] = await Promise.all([
    oldest(MessageState.Parked),
    oldest(MessageState.Held),
    oldest(MessageState.Unknown),
    store.listMutes({ now }),
    store.getBalanceState(),
  ]);
  const items: AttentionItem[] = [];
  const counted = (page: {
    readonly items: readonly { id: string; updatedAt: string }[];
    readonly cursor?: string;
  }) => ({
    count: page.items.length,
    more: page.cursor !== undefined,
    since: page.items[0]?.updatedAt ?? null,
    ids: page.items.map((record) => record.id),
  });
  if (parked.items.length > 0) {
    const newest = parked.items.at(-1)!;
    const forCredit = INSUFFICIENT_BALANCE.test(newest.reason ?? '');
    items.push({
      kind: 'parked',
      ...counted(parked),
      why:
        forCredit && balance.lastBalance !== undefined
          ? `balance ${balance.lastBalance} ${currency}`
          : (newest.reason ?? 'parked'),
      action: forCredit ? 'Top up, then' : 'When the cause is fixed,',
      redrive: 'PARKED',
    });
  }
  if (held.items.length > 0)
    items.push({
      kind: 'held',
      ...counted(held),
      why: held.items.at(-1)!.reason ?? 'held',
      action: 'When the cause is fixed,',
      redrive: 'HELD',
    });
  if (unknown.items.length > 0)
    items.push({
      kind: 'unknown',
      ...counted(unknown),
      why: 'the SMS service may or may not have sent them',
      action: 'Check the inbox, then redrive or dismiss each in Activity',
      redrive: null,
    });
  for (const mute of mutes)
    items.push({
      kind: 'muted',
      count: 1,
      more: false,
      since: mute.mutedAt,
      ids: [],
      route: mute.route,
      until: mute.until,
      why: mute.reason === '' ? 'no reason given' : mute.reason,
      action: 'Its SMS are dropped until then; unmute it in Routes',
      redrive: null,
    });
  return { items };
}
