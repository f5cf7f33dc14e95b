import { Worker } from 'node:worker_threads';
import type { DynaliteOptions } from './dynalite';
import type { DynaliteHandler, SdkHttpRequest, SdkHttpResponse } from './dynalite-handler';
import { RuntimeError } from './errors';

/** What the store's worker posts: that dynalite is ready, a request's answer, that it closed, or why it failed. */
export type ThreadMessage =
  | { readonly ready: true }
  | { readonly id: number; readonly response: SdkHttpResponse }
  | { readonly id: number; readonly error: string }
  | { readonly closed: true }
  | { readonly failed: string };
/** What the store's worker is asked: one SDK request, or to close. */
export type ThreadRequest = { readonly id: number; readonly request: SdkHttpRequest } | 'close';

/** dynalite (and its LevelDB) running in a worker thread of this process. */
export interface DynaliteThread {
  /** An SDK request handler for this process's client: each request is posted to the worker, not sent over HTTP. */
  readonly handler: DynaliteHandler;
  /** The worker itself (its resource use; tests end it to stand in for a crash). */
  readonly worker: Worker;
  /** Closes the server and LevelDB in the worker, then ends it. Idempotent. */
  close(): Promise<void>;
}

export interface DynaliteThreadOptions {
  /** Called once if the worker fails or ends before `close()`: the store is gone. */
  readonly onFailure?: (error: RuntimeError) => void;
}

/**
 * Starts dynalite in a worker thread, which answers this process only: it listens on no port (any
 * local process could reach one, and dynalite takes any signature). In a burst the
 * local runtime's one thread was saturated, dynalite (LevelDB, validation, its expression parsers)
 * a large part of it; in a worker that part runs on the other core. This process's client posts its requests to
 * the worker (`handler`; cheaper for this thread than loopback HTTP), where they are emitted on
 * the server as `createDynaliteHandler` does. Same process: a kill of the runtime ends the worker
 * and frees LevelDB's lock with it.
 *
 * @throws {RuntimeError} the worker could not start dynalite
 *
 * @example
 * ```ts
 * const thread = await startDynaliteThread({ path, createTableMs: 0 }, { onFailure: (error) => stop(error) });
 * const client = new DynamoDBClient({ region, endpoint: IN_PROCESS_ENDPOINT, credentials, requestHandler: thread.handler }); // local-store.ts
 * ```
 */
export async function startDynaliteThread(
  options: DynaliteOptions,
  { onFailure }: DynaliteThreadOptions = {},
): Promise<DynaliteThread> {
  const worker = new Worker(new URL('./dynalite-worker.mjs', import.meta.url), { workerData: options });
  await new Promise<void>((resolve, reject) => {
    const settle = (): void => void worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    const fail = (reason: string, cause?: unknown): void => {
      settle();
      void worker.terminate();
      reject(new RuntimeError(`the local store could not start: ${reason}`, { cause }));
    };
    const onMessage = (message: ThreadMessage): void => {
      if ('ready' in message) {
        settle();
        resolve();
      } else if ('failed' in message) fail(message.failed);
    };
    const onError = (error: Error): void => fail(error.message, error);
    const onExit = (code: number): void => fail(`its worker ended (exit code ${code})`);
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  });

  let state: 'running' | 'closing' | 'ended' = 'running';
  let ended: RuntimeError | undefined;
  let lastId = 0;
  const pending = new Map<
    number,
    { readonly resolve: (answer: { response: SdkHttpResponse }) => void; readonly reject: (error: Error) => void }
  >();
  const end = (error: RuntimeError): void => {
    state = 'ended';
    ended ??= error;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };
  const failed = (reason: string, cause?: unknown): void => {
    if (state !== 'running') return;
    const error = new RuntimeError(`the local store stopped: ${reason}`, { cause });
    end(error);
    void worker.terminate();
    onFailure?.(error);
  };
  worker.on('error', (error) => failed(error.message, error));
  worker.on('exit', (code) => failed(`its worker ended (exit code ${code})`));
  worker.on('message', (message: ThreadMessage) => {
    if ('id' in message) {
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      if ('response' in message) waiting?.resolve({ response: message.response });
      else waiting?.reject(new RuntimeError(`the local store failed a request: ${message.error}`));
    } else if ('failed' in message) failed(message.failed);
  });

  const handler: DynaliteHandler = {
    handle: ({ method, path, query, headers, body }, { abortSignal } = {}) =>
      new Promise((resolve, reject) => {
        if (state !== 'running') return reject(ended ?? new RuntimeError('the local store is closed'));
        if (abortSignal?.aborted === true)
          return reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
        const id = ++lastId;
        pending.set(id, { resolve, reject });
        // Only the fields dynalite reads: the SDK's request object is a class instance with more.
        worker.postMessage({
          id,
          request: { method, path, ...(query === undefined ? {} : { query }), headers, body },
        } satisfies ThreadRequest);
      }),
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
    destroy: () => undefined,
  };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      if (state !== 'running') return void (await worker.terminate());
      state = 'closing';
      try {
        await new Promise<void>((resolve, reject) => {
          worker.on('message', (message: ThreadMessage) => {
            if ('closed' in message) resolve();
            else if ('failed' in message)
              reject(new RuntimeError(`the local store did not close cleanly: ${message.failed}`));
          });
          worker.once('exit', () => resolve());
          worker.postMessage('close' satisfies ThreadRequest);
        });
      } finally {
        end(new RuntimeError('the local store is closed'));
        await worker.terminate();
      }
    })();
    return closing;
  };
  return { handler, worker, close };
}
