import { parentPort } from 'node:worker_threads';
import { compileRoute } from '../../functions/core/config/compile';
import { createTemplateEngine } from '../../functions/core/templates';
import { previewEvaluation } from '../shared/preview';
import type { PreviewJob, WorkerAnswer } from './preview-thread';

// Inside the preview worker (see preview-thread.ts): compiles the route it is given and evaluates
// the payload with it, one job at a time. Compiled routes hold functions, so the route travels as
// its validated settings and is compiled again here.
const port = parentPort!;

port.on(
  'message',
  ({
    id,
    routeId,
    route,
    engineOptions,
    defaultSenderId,
    onCall,
    numbering,
    body,
    headers,
    query,
  }: PreviewJob & { readonly id: number }) => {
    let answer: WorkerAnswer;
    try {
      const problems: string[] = [];
      const compiled = compileRoute(
        routeId,
        route,
        createTemplateEngine(engineOptions),
        defaultSenderId,
        problems,
        undefined,
        onCall,
        numbering,
      );
      answer =
        compiled === undefined
          ? { id, error: problems.join('; ') }
          : { id, result: previewEvaluation(compiled, body, headers, undefined, query) };
    } catch (error) {
      answer = { id, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(answer);
  },
);

port.postMessage({ ready: true } satisfies WorkerAnswer);
