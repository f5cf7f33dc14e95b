import { startSandbox } from '../../../local/sandbox/server';
import type { RunningSandbox } from '../../../local/sandbox/types';
import { call } from './http';
import { registerSecrets } from './logs';

export interface TestSandbox {
  readonly sandbox: RunningSandbox;
  readonly apiKey: string;
}

/**
 * The sandbox SMS service in the test process, so the suite sees exactly what the service
 * received. One SMS costs 1; the balance covers a million unless told otherwise.
 */
export async function startTestSandbox(apiKey: string, balance = 1_000_000): Promise<TestSandbox> {
  registerSecrets([apiKey]);
  const sandbox = await startSandbox({ apiKey, balance, rate: 1, currency: 'TZS', senderIds: ['SANDBOX'] });
  return { sandbox, apiKey };
}

/** How often each text arrived in the inbox. */
export function inboxCounts(sandbox: RunningSandbox): Map<string, number> {
  const counts = new Map<string, number>();
  for (const message of sandbox.messages()) counts.set(message.message, (counts.get(message.message) ?? 0) + 1);
  return counts;
}

/** Sends still to be faulted (`GET /_sandbox/faults`): tells how many sends have reached the service. */
export async function faultsQueued(sandbox: RunningSandbox): Promise<number> {
  const answer = await call(sandbox.baseUrl, { path: '/_sandbox/faults' });
  const queued = answer.json?.['queued'];
  if (answer.status !== 200 || typeof queued !== 'number') throw new Error(`GET /_sandbox/faults answered ${answer.status}: ${answer.text}`);
  return queued;
}
