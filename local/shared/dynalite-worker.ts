import { parentPort, workerData } from 'node:worker_threads';
import { listen } from '../http';
import { createDynalite, type DynaliteOptions } from './dynalite';
import { createDynaliteHandler } from './dynalite-handler';
import type { ThreadMessage, ThreadRequest } from './dynalite-thread';

// Inside the store's worker (see dynalite-thread.ts): dynalite with its LevelDB, answering the
// runtime's requests posted on the port and other processes' on 127.0.0.1.
const port = parentPort!;
const server = createDynalite(workerData as DynaliteOptions);
const handler = createDynaliteHandler(server);
const post = (message: ThreadMessage): void => port.postMessage(message);

listen(server, { port: 0, host: '127.0.0.1' }).then(
  (listening) => post({ port: listening }),
  (error: Error) => post({ failed: error.message }),
);

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
  // dynalite's close also closes LevelDB; idle keep-alive sockets of other clients would hold it.
  server.close((error) => {
    post(error ? { failed: `closing: ${error.message}` } : { closed: true });
    port.close();
  });
  server.closeAllConnections();
});
