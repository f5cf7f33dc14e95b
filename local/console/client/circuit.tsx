import { useState } from 'preact/hooks';
import type { ServiceStatus } from '../contract';
import { api, errorText } from './api';
import { formatTime } from '../../../functions/core/time-format';

/**
 * The SMS service's circuit, and the operator's hand on it: Hold (open it for a while: no SMS is
 * sent, they wait PENDING) and Send now (close it). The same store calls as `sms-relay circuit
 * open --for` and `close`.
 */
export function CircuitControl({ status, onChanged }: { status: ServiceStatus; onChanged: () => void }) {
  const [length, setLength] = useState('30m');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const { circuit } = status;
  const change = async (body: { action: 'close' } | { action: 'open'; for: string }) => {
    setBusy(true);
    try {
      await api('POST /circuit', { body });
      setError(null);
      onChanged();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  const state =
    circuit.state === 'open'
      ? `open since ${formatTime(circuit.since)}${circuit.openedBy === null ? '' : ` (by ${circuit.openedBy})`}: no SMS is sent; next probe ${formatTime(circuit.nextProbeAt)}`
      : circuit.state === 'probation'
        ? `on probation since ${formatTime(circuit.since)}: one send at a time until one goes through`
        : 'closed: SMS go out';
  return (
    <div class="circuit" data-testid="circuit">
      <span data-testid="circuit-state">SMS service circuit {state}</span>
      {circuit.failures > 0 ? <span class="muted"> ({circuit.failures} failed in a row)</span> : null}{' '}
      {circuit.state === 'closed' ? (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void change({ action: 'open', for: length });
          }}
        >
          <label>
            hold every SMS for{' '}
            <input
              size={5}
              value={length}
              data-testid="circuit-for"
              onInput={(e) => setLength((e.target as HTMLInputElement).value)}
            />
          </label>{' '}
          <button type="submit" class="small" disabled={busy} data-testid="circuit-open">
            Hold
          </button>
        </form>
      ) : (
        <button
          type="button"
          class="small"
          disabled={busy}
          data-testid="circuit-close"
          onClick={() => void change({ action: 'close' })}
        >
          Send now (close it)
        </button>
      )}
      {error === null ? null : <div class="error">{error}</div>}
    </div>
  );
}
