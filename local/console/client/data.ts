/** The pages' one way to read the API: loading, polling and never an answer to a request no longer shown. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { AnswerOf, ClientRequest, Endpoint } from '../contract';
import { api, ApiError, type Request } from './api';

export interface DataOptions<Answer> {
  /** Reads again this long after each answer (or error); never two at once. */
  readonly pollMs?: number;
  /** Polls only while the last answer passes this. @default always */
  readonly pollWhile?: (answer: Answer) => boolean;
  /** Waits this long after the request last changed before asking (typing). @default 0 */
  readonly debounceMs?: number;
  /** Keeps showing the previous request's answer until the new one's arrives (marked by `loading`). @default false */
  readonly keep?: boolean;
}

export interface Data<Answer> {
  /** The answer to the current request (or, with `keep`, the previous one while `loading`). */
  readonly data: Answer | null;
  /** The last call's failure; cleared by the next answer. */
  readonly error: ApiError | null;
  /** The current request has not been answered yet. */
  readonly loading: boolean;
  /** Asks again now. */
  reload(): void;
}

interface Loaded<Answer> {
  readonly key: string | null;
  readonly data: Answer | null;
  readonly error: ApiError | null;
  readonly loading: boolean;
}

/**
 * Reads `endpoint` while the component is shown and again whenever `request` changes (`null`: ask
 * nothing). A new request, `reload` or leaving the page cancels the call under way, and an answer
 * that arrives for a request no longer current is dropped, so a slow answer never overwrites a newer one.
 *
 * @example
 * ```tsx
 * const { data, error } = useApi('GET /records/:id', { params: { id } }, { pollMs: 2000, pollWhile: (detail) => detail.record.state === 'PENDING' });
 * ```
 */
export function useApi<E extends Endpoint>(
  endpoint: E,
  request: ClientRequest<E> | null,
  { pollMs, pollWhile = () => true, debounceMs = 0, keep = false }: DataOptions<AnswerOf<E>> = {},
): Data<AnswerOf<E>> {
  const key = request === null ? null : `${endpoint} ${JSON.stringify(request)}`;
  const [loaded, setLoaded] = useState<Loaded<AnswerOf<E>>>({
    key: null,
    data: null,
    error: null,
    loading: key !== null,
  });
  const [reloads, setReloads] = useState(0);
  // The request of this render, for the calls the effect below makes; its key says when it changed.
  const current = useRef({ request, pollWhile });
  current.current = { request, pollWhile };

  useEffect(() => {
    if (key === null) {
      setLoaded({ key, data: null, error: null, loading: false });
      return undefined;
    }
    setLoaded((last) =>
      last.key === key
        ? { ...last, loading: true }
        : { key, data: keep ? last.data : null, error: null, loading: true },
    );
    const controller = new AbortController();
    let timer: number | undefined;
    // The last answer to this request, for `pollWhile` after an error.
    let last: AnswerOf<E> | undefined;
    const ask = async (): Promise<void> => {
      try {
        const data = await (api as (endpoint: E, request: Request<E>) => Promise<AnswerOf<E>>)(endpoint, {
          ...current.current.request!,
          signal: controller.signal,
        });
        if (controller.signal.aborted) return;
        last = data;
        setLoaded({ key, data, error: null, loading: false });
      } catch (error) {
        if (controller.signal.aborted) return;
        setLoaded((shown) => ({
          ...shown,
          error: error instanceof ApiError ? error : new ApiError(String(error), null),
          loading: false,
        }));
      }
      if (pollMs !== undefined && (last === undefined || current.current.pollWhile(last)))
        timer = window.setTimeout(() => void ask(), pollMs);
    };
    timer = window.setTimeout(() => void ask(), debounceMs);
    return () => {
      controller.abort();
      window.clearTimeout(timer);
    };
  }, [key, reloads, pollMs]);

  const fresh = loaded.key === key;
  return {
    data: fresh || keep ? loaded.data : null,
    error: fresh ? loaded.error : null,
    loading: key !== null && (!fresh || loaded.loading),
    reload: () => setReloads((count) => count + 1),
  };
}
