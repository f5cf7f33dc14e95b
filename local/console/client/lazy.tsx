/**
 * Pages whose module is loaded when first shown: the console's first script holds the shell and
 * Activity, and each other page (Credit with uPlot) is a chunk of its own that the entry imports
 * when it is needed, so opening the console does not fetch, compile and run every page's code.
 */
import type { ComponentType, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { errorText } from './api';
import { ErrorBox } from './ui';

/** A component drawn by a module loaded on first use; `preload` starts the load before that. */
export interface LazyComponent<Props> {
  (props: Props): JSX.Element;
  /** Starts loading the module now (the console opens on this page); a failure is shown when drawn. */
  preload(): void;
}

/**
 * The component `load` resolves to, loaded once when first drawn or preloaded. While it loads,
 * `Loading…`; when it fails (the relay stopped, or restarted with other code and no longer serves
 * the chunk), what happened and a retry.
 *
 * @example
 * ```tsx
 * const CreditPage = lazy(async () => (await import('./pages/credit')).CreditPage);
 * ```
 */
export function lazy<Props extends object>(load: () => Promise<ComponentType<Props>>): LazyComponent<Props> {
  let loaded: ComponentType<Props> | undefined;
  let loading: Promise<ComponentType<Props>> | undefined;
  const start = (): Promise<ComponentType<Props>> => {
    loading ??= load().then(
      (component) => {
        loaded = component;
        return component;
      },
      (error: unknown) => {
        // The next draw or retry asks again.
        loading = undefined;
        throw error;
      },
    );
    return loading;
  };

  function Lazy(props: Props): JSX.Element {
    // What this draw knows: the module may arrive between a draw and its effect, so the effect asks
    // by this state, never by `loaded` alone (a draw that showed Loading… must be drawn again).
    const [shown, setShown] = useState<ComponentType<Props> | undefined>(() => loaded);
    const [failure, setFailure] = useState<string | null>(null);
    const [tries, setTries] = useState(0);
    useEffect(() => {
      if (shown !== undefined) return undefined;
      let current = true;
      start().then(
        (component) => current && setShown(() => component),
        (error: unknown) => current && setFailure(errorText(error)),
      );
      return () => {
        current = false;
      };
    }, [tries]);
    if (shown !== undefined) {
      const Shown = shown;
      return <Shown {...props} />;
    }
    if (failure === null) return <p class="muted">Loading…</p>;
    return (
      <ErrorBox
        error={`This page's code could not be loaded (${failure}). If the relay was restarted, reload the page.`}
        onRetry={() => {
          setFailure(null);
          setTries((count) => count + 1);
        }}
      />
    );
  }
  Lazy.preload = (): void => {
    start().catch(() => undefined);
  };
  return Lazy;
}
