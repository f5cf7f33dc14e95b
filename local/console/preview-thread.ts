import { Worker } from 'node:worker_threads';
import type { Numbering } from '../../functions/core/recipients/numbering';
import type { RouteConfig } from '../../functions/core/config/schema';
import { PREVIEW_TIMEOUT_MS } from '../../functions/core/defaults';
import type { TemplateEngineOptions } from '../../functions/core/templates';
import type { PreviewResult } from '../shared/preview';
import { HttpError } from '../http';
import type { OnCallDirectory } from '../../functions/core/oncall/schedule';

/** One preview for the worker: the edited route's validated settings and the payload. */
export interface PreviewJob {
  readonly routeId: string;
  readonly route: RouteConfig;
  readonly engineOptions: Required<TemplateEngineOptions>;
  readonly defaultSenderId: string | undefined;
  /** The config's people and schedules, for `person:` and `oncall:` recipients (a structured clone). */
  readonly onCall?: OnCallDirectory;
  /** The config's `defaultCountry` and providers: how the route's numbers are read. */
  readonly numbering?: Numbering;
  readonly body: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
  /** The query of the URL the payload was posted to (an example's `examples.query`). */
  readonly query?: Readonly<Record<string, string>>;
}

/** What the worker posts: that it is ready, or a job's result or error. */
export type WorkerAnswer =
  | { readonly ready: true }
  | { readonly id: number; readonly result: PreviewResult }
  | { readonly id: number; readonly error: string };

export interface OffThreadOptions {
  /** A job still running after this is stopped by ending the worker. @default PREVIEW_TIMEOUT_MS */
  readonly timeoutMs?: number;
}

/** Previews waiting at most; a page sends one at a time, so more is a runaway client. */
const MAX_WAITING = 16;
/** The worker's start (tsx compiles the pipeline on first load) is not counted in a job's time. */
const START_DEADLINE_MS = 60_000;

let current: { readonly worker: Worker; readonly ready: Promise<void> } | undefined;
let queue: Promise<unknown> = Promise.resolve();
let waiting = 0;
let lastId = 0;

/**
 * Evaluates a console preview in a worker thread, so a template that runs long holds that thread
 * and never the one that answers webhooks: LiquidJS renders synchronously, its async render does
 * not yield either, and a preview is re-run at every keystroke. One worker, kept between previews,
 * one job at a time; a job still running after `timeoutMs` is answered `dropped` with the reason
 * and the worker is ended (a new one starts for the next job). LiquidJS's limits
 * (`TEMPLATE_LIMITS`) stop a long render sooner, with their own reason.
 *
 * @example
 * ```ts
 * const result = await evaluateOffThread({ routeId, route: parsed.data, engineOptions: route.engine.options, defaultSenderId, body, headers });
 * ```
 */
export async function evaluateOffThread(
  job: PreviewJob,
  { timeoutMs = PREVIEW_TIMEOUT_MS }: OffThreadOptions = {},
): Promise<PreviewResult> {
  if (waiting >= MAX_WAITING)
    throw new HttpError(503, `${MAX_WAITING} previews are already waiting; try again in a moment`);
  waiting += 1;
  const run = queue.then(async () => await runJob(job, timeoutMs));
  queue = run.catch(() => undefined);
  try {
    return await run;
  } finally {
    waiting -= 1;
  }
}

/**
 * Starts the worker ahead of the first preview (it takes a second or more: tsx compiles the
 * pipeline in the new thread); the Templates page calls for its payloads first.
 */
export function warmPreviewWorker(): void {
  current ??= startWorker();
}

async function runJob(job: PreviewJob, timeoutMs: number): Promise<PreviewResult> {
  const { worker, ready } = (current ??= startWorker());
  await ready;
  const id = ++lastId;
  return await new Promise<PreviewResult>((resolve, reject) => {
    const settle = (): void => {
      clearTimeout(timer);
      worker.off('message', onMessage).off('exit', onExit);
    };
    const timer = setTimeout(() => {
      settle();
      retire(worker);
      resolve({
        verdict: 'dropped',
        reason: `the preview ran longer than ${timeoutMs} ms and was stopped`,
        dedupeKey: null,
        messages: [],
        dropped: [],
        warnings: [],
      });
    }, timeoutMs);
    const onMessage = (answer: WorkerAnswer): void => {
      if (!('id' in answer) || answer.id !== id) return;
      settle();
      if ('error' in answer) reject(new Error(`preview failed: ${answer.error}`));
      else resolve(answer.result);
    };
    const onExit = (code: number): void => {
      settle();
      reject(new Error(`the preview worker stopped (exit code ${code})`));
    };
    worker.on('message', onMessage).on('exit', onExit);
    worker.postMessage({ id, ...job });
  });
}

function startWorker(): { worker: Worker; ready: Promise<void> } {
  const worker = new Worker(new URL('./preview-worker.mjs', import.meta.url));
  // An idle worker never keeps the process alive; a preview in progress is held by its request.
  worker.unref();
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the preview worker did not start within ${START_DEADLINE_MS} ms`)),
      START_DEADLINE_MS,
    );
    worker.on('message', (answer: WorkerAnswer) => {
      if (!('ready' in answer)) return;
      clearTimeout(timer);
      resolve();
    });
    worker.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the preview worker stopped while starting (exit code ${code})`));
    });
  });
  // A worker that failed or exited is replaced at the next job.
  worker.on('error', () => retire(worker));
  worker.on('exit', () => retire(worker));
  ready.catch(() => retire(worker));
  return { worker, ready };
}

function retire(worker: Worker): void {
  if (current?.worker === worker) current = undefined;
  void worker.terminate();
}
