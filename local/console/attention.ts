/**
 * What needs a person now (`GET /attention`, the console's attention bar): the relay's one summary,
 * `needsAttention`, in the terminal's words, with the ids the bar's Redrive button requeues. Each
 * read is bounded: one page of the state index per state (the oldest {@link ATTENTION_PAGE}), the
 * mutes in force, the circuit and the balance state, whatever the volume; never a scan of the table.
 */
import { AttentionKind, needsAttention } from '../../functions/relay/attention';
import type { MessageStore } from '../../functions/store';
import { MAX_REDRIVE_IDS } from '../records/states';
import type { AttentionAnswer, AttentionItem } from './contract';

/** Records read per state: as many as one redrive request takes, so the button redrives what the bar counts. */
export const ATTENTION_PAGE = MAX_REDRIVE_IDS;

/**
 * The attention bar's items, most urgent first; none when nothing waits for a person. The SMS
 * service being unreachable is left to the console's own banner (with its Send now button).
 *
 * @example
 * ```ts
 * const { items } = await attentionView(store, { currency: 'TZS', now: new Date() });
 * ```
 */
export async function attentionView(
  store: Pick<MessageStore, 'countStuck' | 'listByState' | 'getCircuit' | 'listMutes' | 'getBalanceState'>,
  { currency, now }: { readonly currency: string; readonly now: Date },
): Promise<AttentionAnswer> {
  const items: AttentionItem[] = [];
  for (const { kind, command: _, ...item } of await needsAttention(store, now, { currency, ids: ATTENTION_PAGE }))
    if (kind !== AttentionKind.Unreachable) items.push({ kind, ...item });
  return { items };
}
