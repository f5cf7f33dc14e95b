/**
 * The attention bar, above every page: what waits for a person (SMS parked, held, UNKNOWN; a route
 * muted), how many, since when and what to do, with a Redrive button for the parked and held ones.
 * It polls `GET /attention` and is gone when nothing needs a person.
 */
import { useState } from 'preact/hooks';
import type { AttentionItem } from '../contract';
import { api, errorText } from './api';
import { useApi } from './data';
import { plural } from './format';
import { openActivityState } from './pages/activity';
import { formatTime } from '../../../functions/core/time-format';

/** How often the bar asks again: as often as the service banner. */
const ATTENTION_POLL_MS = 5_000;

/** `2 SMS parked`, `100+ SMS held`, `Route alerts muted until 16:00`: the relay's words, the time on the browser's clock. */
function what(item: AttentionItem): string {
  return item.until === undefined ? item.what : `${item.what} until ${formatTime(item.until)}`;
}

export function AttentionBar() {
  const { data, reload } = useApi('GET /attention', {}, { pollMs: ATTENTION_POLL_MS, keep: true });
  if (data == null || data.items.length === 0) return null;
  return (
    <div class="attention" role="status" aria-live="polite" data-testid="attention">
      {data.items.map((item) => (
        <Item key={`${item.kind}-${item.route ?? ''}`} item={item} onDone={reload} />
      ))}
    </div>
  );
}

function Item({ item, onDone }: { item: AttentionItem; onDone: () => void }) {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<string | null>(null);
  const redrive = async (from: 'PARKED' | 'HELD') => {
    setBusy(true);
    try {
      const { requeued, skipped } = await api('POST /redrive', { body: { from, ids: [...item.ids] } });
      setOutcome(
        `${plural(requeued.length, 'SMS', 'SMS')} redriven${skipped.length === 0 ? '' : `, ${skipped.length} no longer ${from}`}.`,
      );
      onDone();
    } catch (error) {
      setOutcome(errorText(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <p class={`attention-item attention-${item.kind}`} data-testid={`attention-${item.kind}`}>
      <strong>{what(item)}</strong>: {item.why}
      {item.since === null ? '' : `, since ${formatTime(item.since)}`}. {item.action}
      {item.redrive === null ? (
        item.kind === 'unknown' ? (
          <>
            {' '}
            <button type="button" class="link" onClick={() => openActivityState('UNKNOWN')}>
              show them
            </button>
          </>
        ) : item.kind === 'muted' ? (
          <>
            {' '}
            <a href="#/routes">Routes</a>
          </>
        ) : null
      ) : (
        <>
          {' '}
          <button
            type="button"
            class="primary"
            disabled={busy}
            data-testid="attention-redrive"
            onClick={() => void redrive(item.redrive!)}
          >
            Redrive {item.count}
          </button>
        </>
      )}
      {outcome === null ? null : <span class="muted"> {outcome}</span>}
    </p>
  );
}
