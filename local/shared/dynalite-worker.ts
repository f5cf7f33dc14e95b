import { parentPort, workerData } from 'node:worker_threads';
import { createDynalite, type DynaliteOptions } from './dynalite';
import { createDynaliteHandler } from './dynalite-handler';
import type { ThreadMessage, ThreadRequest } from './dynalite-thread';

// Inside the store's worker (see dynalite-thread.ts): dynalite with its LevelDB, answering the
// runtime's requests posted on the message port, and nothing else: it listens on no TCP port, which
// any local process could reach (dynalite checks that a request is signed, not by whom).
const port = parentPort!;
const post = (message: ThreadMessage): void => port.postMessage(message);
let server: ReturnType<typeof createDynalite>;
try {
  server = createDynalite(workerData as DynaliteOptions);
} catch (error) {
  post({ failed: (error as Error).message });
  throw error;
}
const handler = createDynaliteHandler(server);
post({ ready: true });

port.on('message', (message: ThreadRequest) => {
  if (message !== 'close') {
    const { id, request } = message;
    handler.handle(request).then(
      ({ response }) => post({ id, response }),
      (error: Error) => post({ id, error: error.message }),
    );
    return;
  }
  handler.destroy();
  // dynalite's close also closes LevelDB, after the requests in flight.
  server.close((error) => {
    post(error ? { failed: `closing: ${error.message}` } : { closed: true });
    port.close();
  });
});
