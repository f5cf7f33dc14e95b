/**
 * `npm run bench` (`tsx bench/run.ts`): measures what users of the relay feel, prints a summary,
 * and writes `bench/results.json` and `BENCHMARKS.md`.
 *
 * Order: cold init first (child processes only, nothing else running), then the CLI's start-up
 * (child processes; it builds the CLI, so the runtime below runs from the build as after `npm ci`),
 * then DynamoDB per SMS (in process), then time to SMS and the console with 10,000 records (the
 * runtime as a child process); the cost is computed from them.
 *
 * `npm run bench -- --only cli,coldInit` runs only the sections named, merges their figures into
 * the last `bench/results.json`, and updates BENCHMARKS.md's summary and the sections that render
 * on their own (`cli`, `timeToSms`, `dynamoPerSms`, `redrive`); the other sections' text there stays that
 * of the last whole run.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MEMORY_MB } from '../infra/sms-relay';
import { runCli } from './cli';
import { runColdInit } from './cold-init';
import { runConsoleLoad } from './console';
import { costPer1000Sms } from './cost';
import { DynamoDbLocalUnavailable } from '../test/helpers/dynamodb-local';
import { type DynamoRun, runDynamo } from './dynamo';
import {
  cliSection,
  costSection,
  dynamoSection,
  redriveSection,
  renderReport,
  summaryLines,
  timeToSmsSection,
  updateReport,
  type BenchResults,
  type BenchRun,
} from './report';
import { runRedrive } from './redrive';
import { round } from './stats';
import { runTimeToSms } from './time-to-sms';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS_FILE = join(REPO_ROOT, 'bench', 'results.json');
const REPORT_FILE = join(REPO_ROOT, 'BENCHMARKS.md');

/** The sections, in the order they run; `awsCostPer1000Sms` comes with `dynamoPerSms`. */
const SECTIONS = ['coldInit', 'cli', 'dynamoPerSms', 'timeToSms', 'redrive', 'consoleLoad'] as const;
type Section = (typeof SECTIONS)[number];

/** The sections `--only a,b` names, or all of them. */
function selectedSections(args: readonly string[]): ReadonlySet<Section> {
  const at = args.indexOf('--only');
  if (at === -1) return new Set(SECTIONS);
  const names = (args[at + 1] ?? '').split(',').filter((name) => name !== '');
  const unknown = names.filter((name) => !(SECTIONS as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0)
    throw new Error(
      `--only takes section names separated by commas, of ${SECTIONS.join(', ')}${unknown.length > 0 ? `; not ${unknown.join(', ')}` : ''}`,
    );
  return new Set(names as Section[]);
}

async function main(): Promise<void> {
  const only = selectedSections(process.argv.slice(2));
  if (only.size < SECTIONS.length) return runSome(only);
  // The AWS SDK warns once per process about Node 20; it says nothing about the measurement.
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  const started = Date.now();
  const loadBefore = loadavg().map((value) => round(value, 2));
  const log = (line: string): void =>
    void process.stderr.write(`[bench ${round((Date.now() - started) / 1000)} s] ${line}\n`);
  const sectionSeconds: Record<string, number> = {};
  const timed = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    log(`${name}…`);
    const at = Date.now();
    const result = await work();
    sectionSeconds[name] = round((Date.now() - at) / 1000);
    return result;
  };

  const coldInit = await timed('coldInit', () => runColdInit(REPO_ROOT, { log }));
  const cli = await timed('cli', () => runCli(REPO_ROOT, { log }));
  const dynamo = await timed('dynamoPerSms', () => runDynamo());
  const onDynamoDbLocal = await timed('dynamoPerSms on DynamoDB Local', () => dynamoOnDynamoDbLocal());
  const timeToSms = await timed('timeToSms', () => runTimeToSms(REPO_ROOT, { log }));
  const redrive = await timed('redrive', () => runRedrive(REPO_ROOT, { log }));
  const consoleLoad = await timed('consoleLoad', () => runConsoleLoad(REPO_ROOT, { log }));
  const memoryMb = { ingest: DEFAULT_MEMORY_MB.ingest, sender: DEFAULT_MEMORY_MB.sender };
  const cost = costPer1000Sms({
    ingestMs: dynamo.ingestMs,
    senderMs: dynamo.senderMs,
    memoryMb,
    writeUnits: dynamo.perSms.writeUnits,
    readUnits: dynamo.perSms.readUnits,
  });

  const run: BenchRun = {
    results: {
      timeToSms,
      redrive,
      consoleLoad,
      coldInit,
      dynamoPerSms: dynamoResults(dynamo, onDynamoDbLocal),
      awsCostPer1000Sms: { usd: round(cost.usd, 6), shareOfSmsSpend: round(cost.shareOfSmsSpend, 6) },
      cli,
    },
    dynamo: dynamoDetails(dynamo),
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
  writeFileSync(RESULTS_FILE, `${JSON.stringify(run.results, null, 2)}\n`);
  writeFileSync(REPORT_FILE, renderReport(run));
  process.stdout.write(
    `${summaryLines(run).join('\n')}\n\nwrote bench/results.json and BENCHMARKS.md (${run.meta.seconds} s)\n`,
  );
}

/** `--only`: the sections named, merged into the last results. */
async function runSome(only: ReadonlySet<Section>): Promise<void> {
  const started = Date.now();
  const log = (line: string): void =>
    void process.stderr.write(`[bench ${round((Date.now() - started) / 1000)} s] ${line}\n`);
  const measured: Partial<BenchResults> = {};
  let dynamoRun: BenchRun['dynamo'] | undefined;
  let costRun: BenchRun['cost'] | undefined;
  for (const section of SECTIONS.filter((name) => only.has(name))) {
    log(`${section}…`);
    if (section === 'coldInit') Object.assign(measured, { coldInit: await runColdInit(REPO_ROOT, { log }) });
    else if (section === 'cli') Object.assign(measured, { cli: await runCli(REPO_ROOT, { log }) });
    else if (section === 'timeToSms') Object.assign(measured, { timeToSms: await runTimeToSms(REPO_ROOT, { log }) });
    else if (section === 'redrive') Object.assign(measured, { redrive: await runRedrive(REPO_ROOT, { log }) });
    else if (section === 'consoleLoad')
      Object.assign(measured, { consoleLoad: await runConsoleLoad(REPO_ROOT, { log }) });
    else {
      const dynamo = await runDynamo();
      const onDynamoDbLocal = await dynamoOnDynamoDbLocal();
      dynamoRun = dynamoDetails(dynamo);
      const cost = costPer1000Sms({
        ingestMs: dynamo.ingestMs,
        senderMs: dynamo.senderMs,
        memoryMb: { ingest: DEFAULT_MEMORY_MB.ingest, sender: DEFAULT_MEMORY_MB.sender },
        writeUnits: dynamo.perSms.writeUnits,
        readUnits: dynamo.perSms.readUnits,
      });
      costRun = { lines: cost.lines, memoryMb: DEFAULT_MEMORY_MB };
      Object.assign(measured, {
        dynamoPerSms: dynamoResults(dynamo, onDynamoDbLocal),
        awsCostPer1000Sms: { usd: round(cost.usd, 6), shareOfSmsSpend: round(cost.shareOfSmsSpend, 6) },
      });
    }
  }
  const previous = existsSync(RESULTS_FILE)
    ? (JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as Partial<BenchResults>)
    : {};
  const results = { ...previous, ...measured };
  writeFileSync(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(measured, null, 2)}\n\nmerged into bench/results.json`);
  const missing = SECTIONS.filter((name) => !(name in results));
  if (existsSync(REPORT_FILE) && missing.length === 0) {
    const measuredBy = `on ${new Date(started).toISOString()} by \`npm run bench -- --only ${[...only].join(',')}\``;
    const sections = [
      ...(measured.cli === undefined ? [] : [cliSection(measured.cli, measuredBy)]),
      ...(measured.timeToSms === undefined ? [] : [timeToSmsSection(measured.timeToSms, measuredBy)]),
      ...(dynamoRun === undefined
        ? []
        : [dynamoSection((results as BenchResults).dynamoPerSms, dynamoRun, measuredBy)]),
      ...(costRun === undefined ? [] : [costSection((results as BenchResults).awsCostPer1000Sms, costRun)]),
      ...(measured.redrive === undefined ? [] : [redriveSection(measured.redrive, measuredBy)]),
    ];
    writeFileSync(REPORT_FILE, updateReport(readFileSync(REPORT_FILE, 'utf8'), results as BenchResults, sections));
    const rendered: readonly string[] = ['cli', 'timeToSms', 'dynamoPerSms', 'redrive'];
    const left = [...only].filter((name) => !rendered.includes(name));
    process.stdout.write(
      `; updated BENCHMARKS.md's summary${sections.length > 0 ? ' and the sections measured' : ''}${left.length > 0 ? ` (the text of ${left.join(', ')} there is the last whole run's: run the whole bench to render it)` : ''}\n`,
    );
  } else {
    process.stdout.write(
      `; BENCHMARKS.md left as it was (results.json lacks ${missing.join(', ')}: run the whole bench)\n`,
    );
  }
}

/** `dynamoPerSms` of results.json, with the same loop's count on DynamoDB Local. */
function dynamoResults(
  { perSms }: DynamoRun,
  onDynamoDbLocal: BenchResults['dynamoPerSms']['onDynamoDbLocal'],
): BenchResults['dynamoPerSms'] {
  return {
    requests: perSms.requests,
    writeUnits: perSms.writeUnits,
    tableWriteUnits: perSms.tableWriteUnits,
    indexWriteUnitsEstimated: perSms.indexWriteUnitsEstimated,
    ...(onDynamoDbLocal === undefined ? {} : { onDynamoDbLocal }),
  };
}

/** The `dynamoPerSms` loop on AWS's DynamoDB Local (Java); where it cannot start, why. */
async function dynamoOnDynamoDbLocal(): Promise<NonNullable<BenchResults['dynamoPerSms']['onDynamoDbLocal']>> {
  try {
    const { perSms } = await runDynamo({ engine: 'dynamodb-local', webhooks: 100 });
    return {
      requests: perSms.requests,
      writeUnits: perSms.writeUnits,
      tableWriteUnits: perSms.tableWriteUnits,
      indexWriteUnits: perSms.indexWriteUnitsEstimated,
      readUnits: perSms.readUnits,
    };
  } catch (error) {
    if (error instanceof DynamoDbLocalUnavailable) return { unavailable: error.message };
    throw error;
  }
}

function dynamoDetails(dynamo: DynamoRun): BenchRun['dynamo'] {
  return {
    ...dynamo.perSms,
    byCommand: dynamo.byCommand,
    unreported: dynamo.unreported,
    ingestMs: dynamo.ingestMs,
    senderMs: dynamo.senderMs,
  };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
