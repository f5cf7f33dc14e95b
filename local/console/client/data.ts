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

/** How long an early answer waits to be taken: the page it was asked for is drawn within a second or two. */
const EARLY_KEPT_MS = 10_000;

/** A request asked for before its page was drawn, and its answer once it is in. */
interface Early {
  readonly answer: Promise<unknown>;
  readonly at: number;
  settled?: { readonly data: unknown };
}

/** Requests asked for before their page was drawn ({@link prefetch}), each taken once by `useApi`. */
const early = new Map<string, Early>();

const keyOf = (endpoint: Endpoint, request: unknown): string => `${endpoint} ${JSON.stringify(request)}`;

/**
 * Asks for a page's first answer now, before the page is drawn: the first `useApi` of the same
 * endpoint and request takes it instead of asking again. The console draws a page once the
 * overview is in, so without this a page's own request would wait for the overview's round trip;
 * asked at start, it is the first the relay answers.
 *
 * @example
 * ```ts
 * prefetch('GET /credit', { query: { days: 14 } }); // before render(<App />)
 * ```
 */
export function prefetch<E extends Endpoint>(endpoint: E, request: ClientRequest<E>): void {
  const key = keyOf(endpoint, request);
  if (early.has(key)) return;
  const answer = (api as (endpoint: E, request: Request<E>) => Promise<AnswerOf<E>>)(endpoint, request as Request<E>);
  // Its failure is shown by the useApi that takes it (or never, when nothing does).
  const entry: Early = { answer, at: Date.now() };
  answer.then(
    (data) => {
      entry.settled = { data };
    },
    () => undefined,
  );
  early.set(key, entry);
}

/** Resolves once every request asked early so far is answered or has failed. */
export async function earlyAnswered(): Promise<void> {
  await Promise.allSettled([...early.values()].map(({ answer }) => answer));
}

/** The early answer to `key` if one is waiting and fresh; it is taken once. */
function takeEarly(key: string): Promise<unknown> | undefined {
  const found = early.get(key);
  early.delete(key);
  return found === undefined || Date.now() - found.at > EARLY_KEPT_MS ? undefined : found.answer;
}

/**
 * The early answer to `key` when it is already in (and fresh), taken: a component drawn after it
 * arrived shows it in its first render, instead of after an effect, a timer and another render.
 */
function takeSettled(key: string): { readonly data: unknown } | undefined {
  const found = early.get(key);
  if (found?.settled === undefined || Date.now() - found.at > EARLY_KEPT_MS) return undefined;
  early.delete(key);
  return found.settled;
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
  const key = request === null ? null : keyOf(endpoint, request);
  const [loaded, setLoaded] = useState<Loaded<AnswerOf<E>>>(() => {
    const settled = key === null ? undefined : takeSettled(key);
    return settled === undefined
      ? { key: null, data: null, error: null, loading: key !== null }
      : { key, data: settled.data as AnswerOf<E>, error: null, loading: false };
  });
  // Answered at the first render (an early answer already in): the first effect only schedules the poll.
  const answeredAtMount = useRef(loaded.key !== null);
  const [reloads, setReloads] = useState(0);
  // The request of this render, for the calls the effect below makes; its key says when it changed.
  const current = useRef({ request, pollWhile });
  current.current = { request, pollWhile };

  useEffect(() => {
    if (key === null) {
      setLoaded({ key, data: null, error: null, loading: false });
      return undefined;
    }
    const controller = new AbortController();
    let timer: number | undefined;
    // The last answer to this request, for `pollWhile` after an error.
    let last: AnswerOf<E> | undefined;
    const poll = (): void => {
      if (pollMs !== undefined && (last === undefined || current.current.pollWhile(last)))
        timer = window.setTimeout(() => void ask(), pollMs);
    };
    const ask = async (): Promise<void> => {
      try {
        const data = (await (takeEarly(key) ??
          (api as (endpoint: E, request: Request<E>) => Promise<AnswerOf<E>>)(endpoint, {
            ...current.current.request!,
            signal: controller.signal,
          }))) as AnswerOf<E>;
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
      poll();
    };
    if (answeredAtMount.current && loaded.key === key && loaded.data !== null) {
      answeredAtMount.current = false;
      last = loaded.data;
      poll();
    } else {
      answeredAtMount.current = false;
      setLoaded((shown) =>
        shown.key === key
          ? { ...shown, loading: true }
          : { key, data: keep ? shown.data : null, error: null, loading: true },
      );
      timer = window.setTimeout(() => void ask(), debounceMs);
    }
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
