import { Worker } from 'node:worker_threads';

/** dynalite without the parse memo (with the local store's `TransactWriteItems`), for differential tests. */
export interface PlainDynalite {
  readonly endpoint: string;
  close(): Promise<void>;
}

/** Starts memo-less dynalite in a worker thread (see plain-dynalite-worker.mjs), in memory, on 127.0.0.1. */
export const startPlainDynalite = async (): Promise<PlainDynalite> => {
  const worker = new Worker(new URL('./plain-dynalite-worker.mjs', import.meta.url));
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', (message: { port: number }) => resolve(message.port));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`plain dynalite's worker ended (exit code ${code})`)));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => void (await worker.terminate()),
  };
};
