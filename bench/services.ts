/**
 * The benchmarks' stand-ins for AWS and the SMS provider, in a process of their own so that their
 * CPU time does not land on the measured handler's event loop (on AWS, DynamoDB and the provider
 * are other machines): dynalite on 127.0.0.1 and the sandbox SMS service on 127.0.0.1.
 *
 * Started by `startServices()` in `harness.ts` as `node --import tsx bench/services.ts`; prints one
 * JSON line `{ "dynamoEndpoint": …, "sandboxUrl": … }` and runs until its standard input closes.
 */
import { startSandbox } from '../local/sandbox/server';
import { startDynalite } from '../test/helpers/dynalite';

async function main(): Promise<void> {
  const apiKey = process.env['BENCH_SANDBOX_API_KEY'];
  const senderIds = (process.env['BENCH_SANDBOX_SENDER_IDS'] ?? '').split(',').filter((id) => id !== '');
  if (apiKey === undefined || apiKey === '' || senderIds.length === 0) throw new Error('BENCH_SANDBOX_API_KEY and BENCH_SANDBOX_SENDER_IDS are required');
  const dynalite = await startDynalite();
  // A balance no benchmark can exhaust: a 402 would park messages and change the call count.
  const sandbox = await startSandbox({ apiKey, balance: 1_000_000_000, rate: 20, senderIds });
  process.stdout.write(`${JSON.stringify({ dynamoEndpoint: dynalite.endpoint, sandboxUrl: sandbox.baseUrl })}\n`);

  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void Promise.allSettled([sandbox.close(), dynalite.close()]).then(() => process.exit(0));
  };
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main().catch((error: unknown) => {
  console.error('bench services failed to start:', error);
  process.exit(1);
});
