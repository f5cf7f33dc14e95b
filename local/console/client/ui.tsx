/** Small pieces shared by the pages. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Overview, State } from '../contract';

export function StateBadge({ state, testid }: { state: State | string; testid?: string }) {
  return (
    <span class={`badge state-${String(state).toLowerCase()}`} data-testid={testid}>
      {state}
    </span>
  );
}

export function ErrorBox({ error, onRetry }: { error: string | null; onRetry?: () => void }) {
  if (!error) return null;
  return (
    <div class="error" role="alert">
      <span>{error}</span>
      {onRetry ? (
        <button type="button" class="link" onClick={onRetry}>
          retry
        </button>
      ) : null}
    </div>
  );
}

export function Section({
  title,
  children,
  aside,
}: {
  title: string;
  children: ComponentChildren;
  aside?: ComponentChildren;
}) {
  return (
    <section class="panel">
      <header class="panel-head">
        <h2>{title}</h2>
        {aside}
      </header>
      {children}
    </section>
  );
}

/** Label/value pairs in a compact grid. */
export function Fields({ items }: { items: readonly (readonly [string, ComponentChildren])[] }) {
  return (
    <dl class="fields">
      {items.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value === null || value === undefined || value === '' ? '—' : value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Copies text to the clipboard; when the clipboard is refused, selects `fallback`'s text instead. */
export async function copyText(text: string, fallback?: HTMLElement | null): Promise<'copied' | 'selected' | 'failed'> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return 'copied';
    }
  } catch {
    // fall through to selecting the text
  }
  if (fallback) {
    if (fallback instanceof HTMLTextAreaElement || fallback instanceof HTMLInputElement) {
      fallback.focus();
      fallback.select();
    } else {
      const range = document.createRange();
      range.selectNodeContents(fallback);
      const selection = window.getSelection();
      selection?.removeAllRanges();
      selection?.addRange(range);
    }
    return 'selected';
  }
  return 'failed';
}

export function CopyButton({
  text,
  target,
  testid,
  label = 'Copy',
}: {
  text: string;
  target?: () => HTMLElement | null;
  testid?: string;
  label?: string;
}) {
  const [status, setStatus] = useState<string | null>(null);
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  const onClick = async () => {
    const result = await copyText(text, target?.() ?? null);
    setStatus(result === 'copied' ? 'Copied' : result === 'selected' ? 'Selected: press Ctrl+C' : 'Copy failed');
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => setStatus(null), 2000);
  };
  return (
    <button type="button" class="small" data-testid={testid} onClick={onClick}>
      {status ?? label}
    </button>
  );
}

/** One `<option>` per route, "id (source)": the route pickers of Activity and Templates. */
export function RouteOptions({ routes }: { routes: Overview['routes'] }) {
  return (
    <>
      {routes.map((r) => (
        <option key={r.id} value={r.id}>
          {r.id} ({r.source})
        </option>
      ))}
    </>
  );
}
