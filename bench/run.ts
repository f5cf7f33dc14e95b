/**
 * `npm run bench` (`tsx bench/run.ts`): measures what users of the relay feel, prints a summary,
 * and writes `bench/results.json` and `BENCHMARKS.md`.
 *
 * Order: cold init first (child processes only, nothing else running), then DynamoDB per SMS (in
 * process), then time to SMS and the console with 10,000 records (the runtime as a child process); the cost is computed from them.
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MEMORY_MB } from '../infra/sms-relay';
import { runColdInit } from './cold-init';
import { runConsoleLoad } from './console';
import { costPer1000Sms } from './cost';
import { runDynamo } from './dynamo';
import { renderReport, summaryLines, type BenchRun } from './report';
import { round } from './stats';
import { runTimeToSms } from './time-to-sms';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

async function main(): Promise<void> {
  // The AWS SDK warns once per process about Node 20; it says nothing about the measurement.
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  const started = Date.now();
  const loadBefore = loadavg().map((value) => round(value, 2));
  const log = (line: string): void => void process.stderr.write(`[bench ${round((Date.now() - started) / 1000)} s] ${line}\n`);
  const sectionSeconds: Record<string, number> = {};
  const timed = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    log(`${name}…`);
    const at = Date.now();
    const result = await work();
    sectionSeconds[name] = round((Date.now() - at) / 1000);
    return result;
  };

  const coldInit = await timed('coldInit', () => runColdInit(REPO_ROOT, { log }));
  const dynamo = await timed('dynamoPerSms', () => runDynamo());
  const timeToSms = await timed('timeToSms', () => runTimeToSms(REPO_ROOT, { log }));
  const consoleLoad = await timed('consoleLoad', () => runConsoleLoad(REPO_ROOT, { log }));
  const memoryMb = { ingest: DEFAULT_MEMORY_MB.ingest, sender: DEFAULT_MEMORY_MB.sender };
  const cost = costPer1000Sms({
    ingestMs: dynamo.ingestMs,
    senderMs: dynamo.senderMs,
    memoryMb,
    writeUnits: dynamo.perSms.writeUnits + dynamo.perSms.indexWriteUnitsEstimated,
    readUnits: dynamo.perSms.readUnits,
  });

  const run: BenchRun = {
    results: {
      timeToSms,
      consoleLoad,
      coldInit,
      dynamoPerSms: { requests: dynamo.perSms.requests, writeUnits: dynamo.perSms.writeUnits },
      awsCostPer1000Sms: { usd: round(cost.usd, 6), shareOfSmsSpend: round(cost.shareOfSmsSpend, 6) },
    },
    dynamo: { ...dynamo.perSms, byCommand: dynamo.byCommand, unreported: dynamo.unreported, ingestMs: dynamo.ingestMs, senderMs: dynamo.senderMs },
    cost: { lines: cost.lines, memoryMb: DEFAULT_MEMORY_MB },
    meta: {
      date: new Date(started).toISOString(),
      node: process.version,
      machine: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${round(totalmem() / 1024 ** 3)} GB, ${process.platform} ${process.arch}`,
      loadBefore,
      loadAfter: loadavg().map((value) => round(value, 2)),
      seconds: round((Date.now() - started) / 1000),
      sectionSeconds,
    },
  };
  writeFileSync(join(REPO_ROOT, 'bench', 'results.json'), `${JSON.stringify(run.results, null, 2)}\n`);
  writeFileSync(join(REPO_ROOT, 'BENCHMARKS.md'), renderReport(run));
  process.stdout.write(`${summaryLines(run).join('\n')}\n\nwrote bench/results.json and BENCHMARKS.md (${run.meta.seconds} s)\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
