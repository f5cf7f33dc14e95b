// Runs one bundled handler the way Lambda does, in a fresh process: imports the bundle (the cold
// start), invokes `handler(event, context)` with the event read from stdin, and prints the outcome
// as the last line of stdout, after a marker, so it can be told from the handler's own log lines.
//
// Usage: node test/integration/driver.mjs <path/to/index.mjs> [--each|--serve] < event.json
// With --each, stdin holds an array of events, invoked one after the other in this one process
// (a warm container: everything at module level is kept); the result is the array of results.
// With --serve, the process stays up as a Lambda execution environment does between invocations:
// each line of stdin is one event, each answered by its own marker line, one at a time.
// Env: DRIVER_TIMEOUT_MS, the invocation's time-out (getRemainingTimeInMillis), default 60000.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

export const RESULT_MARKER = '@@driver-result@@';

const [bundle, mode] = process.argv.slice(2);
if (bundle === undefined) {
  process.stderr.write('usage: node driver.mjs <bundle index.mjs> < event.json\n');
  process.exit(2);
}

const importHandler = async () => {
  const importStarted = performance.now();
  const { handler } = await import(pathToFileURL(bundle).href);
  return { handler, initMs: performance.now() - importStarted };
};

const timeoutMs = Number(process.env.DRIVER_TIMEOUT_MS ?? 60_000);
const contextOf = (deadline) => ({
  callbackWaitsForEmptyEventLoop: true,
  functionName: 'sms-relay-integration',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:sms-relay-integration',
  memoryLimitInMB: '256',
  awsRequestId: crypto.randomUUID(),
  logGroupName: '/aws/lambda/sms-relay-integration',
  logStreamName: 'local',
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
});
/** Runs `invoke` as one invocation: its result, or the error it threw, and how long it took. */
const outcomeOf = async (invoke, initMs) => {
  const invokeStarted = performance.now();
  let outcome;
  try {
    outcome = { result: await invoke() };
  } catch (error) {
    outcome = { error: { name: error?.name, message: error?.message } };
  }
  outcome.initMs = Math.round(initMs);
  outcome.invokeMs = Math.round(performance.now() - invokeStarted);
  return `\n${RESULT_MARKER}${JSON.stringify(outcome)}\n`;
};

if (mode === '--serve') {
  const { createInterface } = await import('node:readline');
  let loaded;
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() === '') continue;
    const event = JSON.parse(line);
    // The first invocation of an environment pays its init, as on Lambda; the next ones find it done.
    const initMs = loaded === undefined ? (loaded = await importHandler()).initMs : 0;
    const { handler } = loaded;
    process.stdout.write(await outcomeOf(() => handler(event, contextOf(Date.now() + timeoutMs)), initMs));
  }
  process.exit(0);
}

let input = '';
for await (const chunk of process.stdin) input += chunk;
const event = JSON.parse(input);
const { handler, initMs } = await importHandler();
const invokeOnce = (each) => handler(each, contextOf(Date.now() + timeoutMs));
const answer = await outcomeOf(async () => {
  if (mode !== '--each') return await invokeOnce(event);
  const results = [];
  for (const each of event) results.push(await invokeOnce(each));
  return results;
}, initMs);

// Exit once written: pooled keep-alive sockets would otherwise keep the process alive, where
// Lambda would freeze it.
process.stdout.write(answer, () => process.exit(0));
