// Runs one bundled handler the way Lambda does, in a fresh process: imports the bundle (the cold
// start), invokes `handler(event, context)` with the event read from stdin, and prints the outcome
// as the last line of stdout, after a marker, so it can be told from the handler's own log lines.
//
// Usage: node test/integration/driver.mjs <path/to/index.mjs> [--each] < event.json
// With --each, stdin holds an array of events, invoked one after the other in this one process
// (a warm container: everything at module level is kept); the result is the array of results.
// Env: DRIVER_TIMEOUT_MS, the invocation's time-out (getRemainingTimeInMillis), default 60000.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

export const RESULT_MARKER = '@@driver-result@@';

const [bundle, mode] = process.argv.slice(2);
if (bundle === undefined) {
  process.stderr.write('usage: node driver.mjs <bundle index.mjs> < event.json\n');
  process.exit(2);
}

let input = '';
for await (const chunk of process.stdin) input += chunk;
const event = JSON.parse(input);

const importStarted = performance.now();
const { handler } = await import(pathToFileURL(bundle).href);
const initMs = performance.now() - importStarted;

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
const invokeOnce = (each) => handler(each, contextOf(Date.now() + timeoutMs));

const invokeStarted = performance.now();
let outcome;
try {
  if (mode === '--each') {
    const results = [];
    for (const each of event) results.push(await invokeOnce(each));
    outcome = { result: results };
  } else {
    outcome = { result: await invokeOnce(event) };
  }
} catch (error) {
  outcome = { error: { name: error?.name, message: error?.message } };
}
outcome.initMs = Math.round(initMs);
outcome.invokeMs = Math.round(performance.now() - invokeStarted);

// Exit once written: pooled keep-alive sockets would otherwise keep the process alive, where
// Lambda would freeze it.
process.stdout.write(`\n${RESULT_MARKER}${JSON.stringify(outcome)}\n`, () => process.exit(0));
