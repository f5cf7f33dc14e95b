// dynalite as its package ships it, in a worker thread of its own: its modules are loaded anew
// there, so the parse memo that local/shared/dynalite-memo.ts installs in the test's thread does
// not reach it. It answers over HTTP on 127.0.0.1 and a free port, posted back once listening.
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';

const dynalite = createRequire(import.meta.url)('dynalite');
const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
