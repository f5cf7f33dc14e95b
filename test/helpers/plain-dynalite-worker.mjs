// dynalite without the parse memo, in a worker thread of its own: its modules are loaded anew
// there, so the memo that local/shared/dynalite-memo.ts installs in the test's thread does not
// reach it. It has the local store's TransactWriteItems (the relay's accept needs it). It answers
// over HTTP on 127.0.0.1 and a free port, posted back once listening.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { createDynalite } = await import('../../local/shared/dynalite.ts');
const server = createDynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }, { memo: false });
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
