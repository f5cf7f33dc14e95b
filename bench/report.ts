/**
 * Renders a bench run: the summary printed at the end of `npm run bench`, and BENCHMARKS.md.
 * Pure functions of the run, so the report can be tested without running anything.
 */
import type { HandlerName } from '../infra/bundle';
import { awsTimeToSmsSection } from './aws-time-to-sms';
import type { CliStartup } from './cli';
import type { ColdInitEntry } from './cold-init';
import type { ConsoleLoad } from './console';
import { fixedMonthlyCost, PRICES, PROD_FIXED, SMS_PRICE_TZS, TZS_PER_USD, type CostLine } from './cost';
import type { Redrive } from './redrive';
import type { TimeToSms } from './time-to-sms';
import { ratio } from './stats';

/** `bench/results.json`: the public contract. */
export interface BenchResults {
  readonly timeToSms: TimeToSms;
  readonly redrive: Redrive;
  readonly consoleLoad: ConsoleLoad;
  readonly coldInit: Readonly<Record<HandlerName, ColdInitEntry>>;
  /** `writeUnits`: the table's as reported plus the indexes' estimated (dynalite reports no index units). */
  readonly dynamoPerSms: {
    readonly requests: number;
    readonly writeUnits: number;
    readonly tableWriteUnits?: number;
    readonly indexWriteUnitsEstimated?: number;
    /** The same loop on AWS's DynamoDB Local, which reports index units (measured, not estimated); or why it was not run. */
    readonly onDynamoDbLocal?: DynamoDbLocalCount | { readonly unavailable: string };
  };
  readonly awsCostPer1000Sms: { readonly usd: number; readonly shareOfSmsSpend: number };
  readonly cli: CliStartup;
}

/** `dynamoPerSms` as DynamoDB Local counts it. */
export interface DynamoDbLocalCount {
  readonly requests: number;
  readonly writeUnits: number;
  readonly tableWriteUnits: number;
  readonly indexWriteUnits: number;
  /** Read units as reported (absent from runs before they were kept). */
  readonly readUnits?: number;
}

/** What the report says beyond the results. */
export interface BenchRun {
  readonly results: BenchResults;
  readonly dynamo: {
    readonly readUnits: number;
    readonly tableWriteUnits: number;
    readonly indexWriteUnitsEstimated: number;
    readonly byCommand: Readonly<Record<string, number>>;
    readonly unreported: number;
    readonly ingestMs: number;
    readonly senderMs: number;
  };
  readonly cost: { readonly lines: readonly CostLine[]; readonly memoryMb: Readonly<Record<string, number>> };
  readonly meta: {
    readonly date: string;
    readonly node: string;
    readonly machine: string;
    readonly loadBefore: readonly number[];
    readonly loadAfter: readonly number[];
    readonly seconds: number;
    readonly sectionSeconds: Readonly<Record<string, number>>;
  };
}

const table = (header: readonly string[], rows: readonly (readonly string[])[]): string[] => [
  `| ${header.join(' | ')} |`,
  `|${header.map(() => '---').join('|')}|`,
  ...rows.map((row) => `| ${row.join(' | ')} |`),
];

const usd = (value: number): string =>
  value === 0 ? '$0' : `$${value < 0.01 ? value.toPrecision(2) : value.toFixed(4)}`;
const percent = (share: number): string => `${(share * 100).toPrecision(2)} %`;

/** BENCHMARKS.md's first paragraph: what the page holds and how to make it. */
const INTRO =
  'What a user of the relay feels: how long a webhook takes to become an SMS, how many SMS a burst gets through, how fast the local web console answers with 10,000 records, how long a cold Lambda takes to start, what AWS charges per SMS, and how long the CLI takes to answer. `npm run bench` (`tsx bench/run.ts`, a few minutes) measures them, prints the summary below and writes `bench/results.json` (keys `timeToSms`, `redrive`, `consoleLoad`, `coldInit`, `dynamoPerSms`, `awsCostPer1000Sms`, `cli`) and this file. `npm run bench -- --only cli` (section names separated by commas: `coldInit`, `cli`, `dynamoPerSms`, `timeToSms`, `redrive`, `consoleLoad`) measures only those: their figures go into results.json and the summary below, and the sections of the CLI, time to SMS, DynamoDB per SMS and redrive are rewritten; the text of the other sections changes only with a whole run. Nothing leaves loopback.';

/** The lines printed at the end of a run: figure, value, baseline and ratio where there is one. */
export function summaryLines({ results: r }: Pick<BenchRun, 'results'>): string[] {
  const { trickle, burst } = r.timeToSms;
  const rows: [string, string, string][] = [
    [
      'time to SMS, trickle p50 / p99',
      `${trickle.p50Ms} / ${trickle.p99Ms} ms`,
      `floor ${trickle.floorP50Ms} / ${trickle.floorP99Ms} ms (p99 ${ratio(trickle.p99Ms, trickle.floorP99Ms)}× its)`,
    ],
    ['burst: 202 p99', `${burst.acceptP99Ms} ms`, ''],
    ['burst: drain', `${burst.drainSeconds} s`, ''],
    [
      'burst: SMS per second',
      `${burst.smsPerSecond}`,
      `floor ${burst.floorSmsPerSecond} (${Math.round((burst.smsPerSecond / burst.floorSmsPerSecond) * 100)} % of it)`,
    ],
    [
      'redrive: parked SMS per second',
      `${r.redrive.smsPerSecond}`,
      `${r.redrive.records.toLocaleString('en-US')} records in ${r.redrive.seconds} s`,
    ],
    [
      'console: records API, first 100',
      `${r.consoleLoad.api.recordsMs} ms`,
      `logs' listing ${r.consoleLoad.baseline.logsRecordsMs} ms, ratio ${r.consoleLoad.recordsRatio}×`,
    ],
    [
      'console: Activity / Credit page',
      'activityMs' in r.consoleLoad.browser
        ? `${r.consoleLoad.browser.activityMs} / ${r.consoleLoad.browser.creditMs} ms`
        : 'not measured',
      'activityMs' in r.consoleLoad.browser
        ? `${r.consoleLoad.records.toLocaleString('en-US')} records, Chromium`
        : r.consoleLoad.browser.skipped,
    ],
    ...Object.entries(r.coldInit).map(([name, entry]): [string, string, string] => [
      `cold init ${name}`,
      `${entry.ms} ms`,
      `baseline ${entry.baselineMs} ms, ratio ${entry.ratio}×`,
    ]),
    [
      'DynamoDB per SMS',
      `${r.dynamoPerSms.requests} requests, ${r.dynamoPerSms.writeUnits} WRU`,
      'plain route; WRU: table as reported + indexes estimated',
    ],
    dynamoDbLocalRow(r.dynamoPerSms.onDynamoDbLocal),
    [
      'AWS cost per 1,000 SMS',
      usd(r.awsCostPer1000Sms.usd),
      `${percent(r.awsCostPer1000Sms.shareOfSmsSpend)} of the SMS spend; ${fixedRange()} a month fixed`,
    ],
    [
      'CLI: sms-relay --help',
      `${r.cli.helpMs} ms`,
      `baseline node -e 0 ${r.cli.baselineMs} ms, ratio ${r.cli.helpRatio}×`,
    ],
    [
      'CLI: sms-relay validate',
      `${r.cli.validateMs} ms`,
      `baseline node -e 0 ${r.cli.baselineMs} ms, ratio ${r.cli.validateRatio}×`,
    ],
  ];
  const width = [0, 1].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => `${row[0].padEnd(width[0]!)}  ${row[1].padEnd(width[1]!)}  ${row[2]}`.trimEnd());
}

/** What bounds the local burst; how it got here is in docs/decisions/ (0001, 0003). */
const BURST_BOUND =
  "**What bounds the burst locally: the store's thread.** The runtime's process keeps two threads busy through a burst: the main thread (the webhook server, the relay's evaluation and sender, the SMS client, the AWS SDK client) and a worker thread with dynalite and its LevelDB (`local/shared/dynalite-thread.ts`), which the main thread posts each store request to. Each SMS asks the store 3 requests of its own (the accept's transaction, the claim and the settle; the circuit is written on a success only by a process that knows of failures), and the day's spend counter is written once a second per process for all the sends it counted meanwhile (`coalesceInWindows` in `functions/core/coalesce.ts`, decision 0012): 3.16-3.43 requests per SMS over the bench's 1,105 SMS (counted in the store's worker, 2026-12-05: 3.70-3.88 with a spend addition per SMS, shared only while one was under way; 4.38-4.40 with the circuit's reset on every success, decision 0009), and dynalite runs as its package ships it: the parse memo that kept its expression parses and table descriptions (patched into its private modules) was removed, since the project does not patch a dependency to move a local figure. A CPU profile of the burst (`--cpu-prof`, 2026-12-04) puts the worker at about 100 % busy: dynalite's expression parsers (PEG) take 32 % of it, reading the table's description from LevelDB before every request 15 %, LevelDB's writes and index updates most of the rest. So each 202 waits behind the sends' store requests on that thread, and the webhooks' accept p99 grows with the requests per SMS. The main thread's own share fell: the local store's client no longer signs its requests (SigV4 of requests that never leave the process was 7 % of that thread).  How it got here, with the figures before and after each change: [docs/decisions](docs/decisions/README.md) 0001 and 0003.";

const TRICKLE_BOUND =
  "**What bounds the trickle locally: the store's claim.** Between a 202 and its SMS the runtime makes one store request, the claim (one conditional `UpdateItem`, which keeps a second sender from sending the record), then the send. The floor row times exactly that with nothing else running, in the same run: the trickle's p99 is read against it. On this machine the claim alone, in dynalite as it ships, has a p99 of 10-14 ms (its expression parse and four to six LevelDB steps, each a trip to the thread pool), which is why the trickle's p99 sits above 10 ms: [decision 0013](docs/decisions/0013-trickle-measured-against-its-floor.md).";

/** `## Time to SMS`, on its own so that a run of that section alone (`--only timeToSms`) can replace it. */
export function timeToSmsSection({ trickle, burst }: TimeToSms, measured?: string): string[] {
  return [
    '## Time to SMS',
    '',
    `The real local runtime, \`node bin/sms-relay.mjs start\` (the \`npm start\` of a developer: ingest, a DynamoDB-streams stand-in and the sender on dynalite on disk), runs as a child process with one generic route (Bearer token, one recipient, \`template: "{{ message }}"\`). Its \`PROVIDER_BASE_URL\` is a sandbox SMS service in the bench process, whose \`onDelivered\` hook stamps when each send arrives. Five webhooks warm the runtime up first and are not counted.${measured === undefined ? '' : ` Measured ${measured}, apart from the rest of this page.`}`,
    '',
    ...table(
      ['figure', 'value', 'how'],
      [
        [
          'trickle p50 / p99',
          `${trickle.p50Ms} / ${trickle.p99Ms} ms`,
          '100 webhooks posted one at a time, each from its 202 answer to the arrival of its SMS at the service',
        ],
        [
          'trickle floor p50 / p99',
          `${trickle.floorP50Ms} / ${trickle.floorP99Ms} ms`,
          "what the runtime cannot skip between a 202 and the SMS, alone: 100 records, one at a time, each accepted into a local store opened as the runtime opens it (dynalite on disk in a worker thread), then timed from the start of its claim to the arrival of its SMS, sent straight to the same sandbox with the relay's SMS client",
        ],
        [
          'burst 202 p99',
          `${burst.acceptP99Ms} ms`,
          '1,000 webhooks at 64 concurrent posts: p99 from sending a post to its 202',
        ],
        ['burst drain', `${burst.drainSeconds} s`, 'from the first post to the last SMS received'],
        ['burst SMS per second', `${burst.smsPerSecond}`, '1,000 / drain'],
        [
          'floor SMS per second',
          `${burst.floorSmsPerSecond}`,
          "the same 1,000 sends made straight to the same sandbox with the relay's SMS client (`createSmsClient`) at 64 concurrent, to the last received",
        ],
      ],
    ),
    '',
    'A trickle time would be below zero for a webhook whose SMS reached the service before its 202 reached the poster: the runtime hands the record to the sender as soon as it is written.',
    '',
    TRICKLE_BOUND,
    '',
    BURST_BOUND,
  ];
}

/** `## CLI start-up`, on its own so that a run of that section alone (`--only cli`) can replace it. */
export function cliSection(cli: CliStartup, measured?: string): string[] {
  return [
    '## CLI start-up',
    '',
    `How long a user waits for the CLI: each sample is a fresh \`node bin/sms-relay.mjs …\` in the repository, timed from spawning it to its exit, as a shell runs it. The baseline is \`node -e 0\` in the same rounds, Node's own start that no CLI goes under; the three alternate, the figure is the median of 15.${measured === undefined ? '' : ` Measured ${measured}, apart from the rest of this page.`}`,
    '',
    ...table(
      ['command', 'built (ms)', 'baseline (ms)', 'ratio', 'sources through tsx (ms)'],
      [
        ['`sms-relay --help`', `${cli.helpMs}`, `${cli.baselineMs}`, `${cli.helpRatio}×`, `${cli.sources.helpMs}`],
        [
          '`sms-relay validate --config config/prod.yaml`',
          `${cli.validateMs}`,
          `${cli.baselineMs}`,
          `${cli.validateRatio}×`,
          `${cli.sources.validateMs}`,
        ],
        // Older results have no store commands.
        ...(cli.store ?? []).map((store) => [
          `\`sms-relay ${store.command}\` (running relay)`,
          `${store.ms}`,
          `${store.baselineMs}`,
          `${store.ratio}×`,
          '',
        ]),
      ],
    ),
    '',
    "The store commands run against a relay started for the bench (`sms-relay start` on a temporary data directory, one webhook recorded): it holds the local store, so they ask it through its `/_relay` API and load neither the AWS SDK, the store, dynalite nor zod; `mutes` and `oncall` also read the config (its compiler: yaml, zod, LiquidJS, libphonenumber) for the routes' time zones and the schedules. Their baseline is `node -e 0` in their own rounds.",
    '',
    "The CLI runs from its build (`npm run build`, which `npm ci` runs as the `prepare` script; the bench builds first): `local/cli/main.ts` bundled with its dependencies by esbuild into `dist/cli/`, with each command's modules in chunks of their own, loaded only when it runs. `--help` loads commander and the list of commands the build recorded, none of the commands' modules; `validate` loads the config loader (yaml, zod, LiquidJS, libphonenumber) and nothing of the AWS SDK or dynalite. Before it runs the build, the launcher (`local/cli/launch.mjs`) hashes the contents of every file the build was made from (about 160, a few milliseconds) and compares the hash with the build's; when a file changed since, it runs the TypeScript sources through tsx instead. The last column is that case, median of 5: what a start costs while the build is stale. (Before the CLI had a build, every start went through tsx and loaded every command's modules, as `--help` from the sources still does.)",
  ];
}

/** `## DynamoDB per SMS`, on its own so that a run of that section alone (`--only dynamoPerSms`) can replace it. */
export function dynamoSection(
  perSms: BenchResults['dynamoPerSms'],
  dynamo: BenchRun['dynamo'],
  measured?: string,
): string[] {
  return [
    '## DynamoDB per SMS',
    '',
    `\`ingestWebhook\` then \`sendMessage\` (functions/relay), in process, for webhooks of one SMS each on a plain route (no limits, no reserve) on dynalite and a sandbox, with the relay context wired by hand as the relay's tests wire it (\`loadConfig\`, \`createStore\`, \`createFileSecretSource\`, \`createSmsClientSource\`, a logger and metrics that discard). A client middleware adds \`ReturnConsumedCapacity: 'TOTAL'\` to every data command and sums the \`ConsumedCapacity\` of the answers; the units are not recomputed from item sizes.${measured === undefined ? '' : ` Measured ${measured}, apart from the rest of this page.`}`,
    '',
    ...table(
      ['per SMS', 'value'],
      [
        [
          'requests',
          `${perSms.requests} (${Object.entries(dynamo.byCommand)
            .map(([command, count]) => `${command} ${count}`)
            .join(', ')})`,
        ],
        ['**write units** (table + indexes)', `${perSms.writeUnits}`],
        ['write units of the table, as reported', `${dynamo.tableWriteUnits}`],
        ['index write units, **estimated** (not reported by dynalite)', `${dynamo.indexWriteUnitsEstimated}`],
        ['read units, as reported', `${dynamo.readUnits}`],
        ['requests answered without `ConsumedCapacity`', `${dynamo.unreported}`],
      ],
    ),
    '',
    "What a plain route's SMS asks of DynamoDB now: the accept (one `TransactWriteItems`: the dedupe guard keyed by the delivery and the record keyed by its id, written all or none), the claim and the settle (one conditional update each). A fraction of a GetItem beside them is the SMS service's circuit, which a process reads again once what it knows is 3 s old (`CIRCUIT.knownMs`): per SMS it depends on the pace of the loop (none when 200 SMS take under 3 s, about 0.05 when the machine is loaded). A transactional write costs DynamoDB two write units per started KB of each item (its prepare and its commit), so the accept's two items cost 4 table units instead of 2 ([decision 0002](docs/decisions/0002-transactional-accept.md) says why that is worth it). The index entries the transaction's puts add are counted at the standard rate, as the writes of any put. The credits spent are no longer counted per send: the spend views (the low-balance forecast, the console's spend per day and a route's spend today) add up the sent records' `deducted` from the state index, which holds each record's route, `sentAt` and the service's answer; only a route with `limits.creditsPerDay` still counts its day's spend, which its limit is checked against. The price item is written when the price changes, not on every send (a store knows the price it last wrote or read for five minutes). Routes with limits or a reserve add what they check (counted in test/functions/relay/requests.test.ts, which counts the requests the client sends): a messages limit its window counter, one update; a credits limit a read of the price, its day reservation and its spend; a balance reserve a read of the projected balance, its reservation, its settlement, the projection set to the balance the service reported and the balance state, four updates. How the count got here: [docs/decisions](docs/decisions/README.md) 0001 and 0002.",
    '',
    "**dynalite reports table capacity only.** It answers `ConsumedCapacity` for GetItem, PutItem, UpdateItem, DeleteItem and the batch commands, sized from the item by dynalite's own reckoning of DynamoDB's rules, but it has no global secondary index units (with `INDEXES` it returns only `Table`) and returns none for Query. DynamoDB on AWS includes the index writes in `TOTAL`. So the index writes are estimated, labelled, by [DynamoDB's documented rule](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html): a put of an item with an index's keys writes one index entry; an update that sets an index key deletes the old entry (counted as one unit) and writes a new one; an entry costs the size of the attributes the index projects, per started KB (the state index `byStateSummary` projects the keys, route, times, `nextAttemptAt` and the send's answer, at most 512 bytes, never the text, the recipients or the history; `byRoute` the keys only; `byDue` the keys and `updatedAt`, and only while a record is PENDING: the accept's put and the claim's delete, which removes its key; an update of an item left without an index's keys writes no entry there). `writeUnits` in results.json is the table's units plus this estimate. Conditional writes that fail consume units on AWS but dynalite answers them with an error and no capacity; this path has none.",
    '',
    dynamoDbLocalLine(perSms.onDynamoDbLocal),
    '',
    `The same loop times each call: median ${dynamo.ingestMs} ms for \`ingestWebhook\`, ${dynamo.senderMs} ms for \`sendMessage\`, the durations the cost uses.`,
  ];
}

/** The summary's line of `dynamoPerSms` as DynamoDB Local counts it, or why it is missing. */
function dynamoDbLocalRow(local: BenchResults['dynamoPerSms']['onDynamoDbLocal']): [string, string, string] {
  const figure = 'DynamoDB per SMS, DynamoDB Local';
  if (local === undefined) return [figure, 'not measured', 'not in this run'];
  if ('unavailable' in local) return [figure, 'not measured', local.unavailable];
  return [
    figure,
    `${local.requests} requests, ${local.writeUnits} WRU`,
    `measured: table ${local.tableWriteUnits} + indexes ${local.indexWriteUnits} WRU${local.readUnits === undefined ? '' : `, ${local.readUnits} RRU`}`,
  ];
}

function dynamoDbLocalLine(local: BenchResults['dynamoPerSms']['onDynamoDbLocal']): string {
  const what =
    "**As AWS's DynamoDB Local counts it** (the engine of `npm run test:aws`, asked for `INDEXES`, which reports each index's units)";
  if (local === undefined) return `${what}: not measured in this run.`;
  if ('unavailable' in local) return `${what}: not measured: ${local.unavailable}.`;
  const reads = local.readUnits === undefined ? '' : ` and ${local.readUnits} read units`;
  return `${what}: ${local.requests} requests, ${local.writeUnits} write units per SMS: ${local.tableWriteUnits} of the table and ${local.indexWriteUnits} of the indexes, measured${reads}. It counts the index entries a transaction writes at the transactional rate (two units each), where the estimate above counts them at the standard rate.`;
}

/** `## Redrive`, on its own so that a run of that section alone (`--only redrive`) can replace it. */
export function redriveSection(redrive: Redrive, measured?: string): string[] {
  return [
    '## Redrive',
    '',
    `How long a backlog of parked messages takes to leave after a top-up. The same runtime as above parks ${redrive.records.toLocaleString('en-US')} messages the way they park (webhooks accepted while the sandbox's balance is 0, each send answered 402); the balance is topped up and \`node bin/sms-relay.mjs redrive\` runs as an operator runs it. The clock runs from starting that command to the last SMS at the service.${measured === undefined ? '' : ` Measured ${measured}, apart from the rest of this page.`}`,
    '',
    ...table(
      ['figure', 'value'],
      [
        ['records', `${redrive.records}`],
        ['seconds', `${redrive.seconds}`],
        ['SMS per second', `${redrive.smsPerSecond}`],
      ],
    ),
    '',
    "The command runs with its default `--rate`: half of `provider.maxPerSecond`, or 10 records a second without it (this bench's config has none), so that a redrive leaves room for alerts; the figure is that cap, by design (`--rate <n>` sets another; before the cap, on 2026-11-26, the same 2,000 went at 324.7 SMS per second). Locally the runtime hands each chunk the command re-queues straight to its send queue, the path of a new record, as the console's redrive button and `POST /_relay/redrive` do. Before lanes, the runtime did the same with no cap; on AWS the sweeper sent a redrive, 200 records per state a minute, 4 at a time: 5,000 parked SMS took 25 minutes or more.",
    '',
    "**On AWS (an estimate, not measured):** a requeue leaves the record PENDING with no attempt, and the stream mapping's second filter (MODIFY, `state` PENDING, `attempts` 0) hands it to the sender like a new record; the sweeper leaves records younger than `SWEEP_PENDING_GRACE_MS` (10 s) to it. The pace is then the slower of two. The operator's `sms-relay redrive --env <name>` re-queues 10 records at a time side by side, one conditional write each: at a 150 ms round trip to the region that is about 65 records a second (5,000 in about 75 s; from inside the region, a few ms a round trip, hundreds a second). The sender takes stream batches of 10, 2 per shard, 4 sends at a time each: about 8 sends in flight per shard; at 0.3–0.6 s per send to an SMS service in East Africa that is about 13–27 SMS a second per shard (a table of this size has one or a few shards), so 5,000 parked SMS leave in about 3–6 minutes instead of 25 or more, set by the SMS service's answer time, not by a schedule.",
  ];
}

function consoleSection(c: ConsoleLoad): string {
  return `The same runtime as above, but with config/local.yaml, receives ${c.records.toLocaleString('en-US')} records as real webhooks, 32 posts at a time (90 % \`notify\`, 6 % resolved Alertmanager alerts that the \`alerts\` route's \`when\` drops, 4 % Grafana alerts), and sends them to a sandbox SMS service whose balance covers about 94 % of them, so the rest park (a trial run: 9,400 SENT, 26 PARKED, 606 DROPPED). Seeding (posting plus the sender's drain) took ${c.seedSeconds} s. Then, with nothing pending, each request and page is timed on loopback.\n\nThe Credit page reads a bounded number of items whatever the volume: the newest 500 sends (one partition of the state index, newest first), the balance readings and one spend counter a day (each route counted apart); it once added up every record of the period (3.37 s in Chromium with 10,031 records on this machine before 2026-12-04). A listing of the console or \`logs\` pauses after itself (three times its length, so listings take at most a quarter of the store's time) only while the sender has SMS queued or being sent: on an idle relay a page's requests wait for no pause, which was most of the Activity page's 1.84 s, nor for the runtime's own sweep or attention check. Opened by its address, Activity and Credit ask for their own data as the script starts, first, beside the overview (they asked once the overview was in, behind the attention bar's read). Most of what is left is the browser's own: with the API answered from memory (Playwright's \`page.route\`) a page still took 70–85 % of the time it takes with the relay answering (2026-12-05, machine at load 16–20; [decision 0008](docs/decisions/0008-console-pages-ask-first.md)). Since then the page loads only its own code: ES-module chunks, about 38 KB of script for Activity where every page's code and uPlot were 115 KB, whose evaluation took 137–228 ms before Activity asked for its rows; Credit's chunk brings uPlot; and a row is drawn without building a date formatter for each time it shows ([decision 0011](docs/decisions/0011-console-loads-only-its-page.md)). The figures below time a load from \`goto\` to the page's content, as a person waits for it; until 2026-12-05 they also counted the fresh browser context's creation and closing, the browser profile's own work (at load 13–16 a third or more of a sample).`;
}

export function renderReport(run: BenchRun): string {
  const { results: r, dynamo, cost, meta } = run;
  const sections = Object.entries(meta.sectionSeconds)
    .map(([name, seconds]) => `${name} ${seconds} s`)
    .join(', ');
  return [
    '# Benchmarks',
    '',
    '<!-- Generated by `npm run bench` (bench/report.ts). Do not edit by hand: run the bench again. -->',
    '',
    INTRO,
    '',
    `Last run ${meta.date} on ${meta.machine}, Node ${meta.node}, ${meta.seconds} s (${sections}). Load average before ${meta.loadBefore.join(' / ')}, after ${meta.loadAfter.join(' / ')}: the machine is shared, so absolute times move between runs; compare the ratios to the baselines, which are measured in the same run.`,
    '',
    '## Summary',
    '',
    '```text',
    ...summaryLines(run),
    '```',
    '',
    ...timeToSmsSection(r.timeToSms),
    '',
    ...awsTimeToSmsSection(),
    ...redriveSection(r.redrive),
    '',
    '## Console with 10,000 records',
    '',
    consoleSection(r.consoleLoad),
    '',
    ...table(
      ['figure', 'median of 5 (after 1 warm-up)', 'how'],
      [
        [
          '`GET /console/api/records?limit=100`',
          `${r.consoleLoad.api.recordsMs} ms`,
          'the first page of records (the Activity page asks for 50), full body read from Node',
        ],
        ['`GET /console/api/routes`', `${r.consoleLoad.api.routesMs} ms`, 'same'],
        ['`GET /console/api/credit`', `${r.consoleLoad.api.creditMs} ms`, 'same'],
        [
          'baseline: `GET /_relay/records?limit=100`',
          `${r.consoleLoad.baseline.logsRecordsMs} ms`,
          `what \`sms-relay logs\` reads; the console's first page is ${r.consoleLoad.recordsRatio}× it`,
        ],
        ...('activityMs' in r.consoleLoad.browser
          ? [
              [
                'Activity page in Chromium',
                `${r.consoleLoad.browser.activityMs} ms`,
                'a fresh browser context (empty cache) each time, from `goto /console` to the first `activity-row` visible (without creating and closing the context, since 2026-12-05)',
              ],
              [
                'Credit page in Chromium',
                `${r.consoleLoad.browser.creditMs} ms`,
                'the same, `goto /console#/credit` until the balance chart has its canvas',
              ],
            ]
          : [['pages in Chromium', 'not measured', r.consoleLoad.browser.skipped]]),
      ],
    ),
    '',
    '## Cold init',
    '',
    "Each handler is bundled by the stack's own `bundleHandlers` (`infra/bundle.ts`) and staged as deployed (`stageFunctionAsset`: the bundle plus `config/prod.yaml` as `relay-config.json`). Each sample is a fresh `node` process timing `await import(bundle)` from inside, with the stack's Lambda environment, so the relay runtime is built during the import as in Lambda's init phase; the figure is the median of 15. The baseline is a bundle made by the same bundler that only imports and constructs the two AWS SDK clients every handler uses (DynamoDB, Secrets Manager); handler and baseline processes alternate.",
    '',
    ...table(
      ['bundle', 'import + init (ms)', 'baseline (ms)', 'ratio', 'memory'],
      Object.entries(r.coldInit).map(([name, entry]) => [
        name,
        `${entry.ms}`,
        `${entry.baselineMs}`,
        `${entry.ratio}×`,
        `${cost.memoryMb[name]} MB`,
      ]),
    ),
    '',
    ...cliSection(r.cli),
    '',
    ...dynamoSection(r.dynamoPerSms, dynamo),
    '',
    ...costSection(r.awsCostPer1000Sms, cost),
  ].join('\n');
}

/**
 * BENCHMARKS.md after a run of some sections only: the first paragraph as now, the summary from
 * `results` (the new figures merged into the last ones), and each given section in place of its old text (up to the next
 * `## ` heading), or before `## DynamoDB per SMS` when it had none.
 */
export function updateReport(
  markdown: string,
  results: BenchResults,
  sections: readonly (readonly string[])[],
): string {
  let text = markdown
    .replace(/^What a user of the relay feels:.*$/m, () => INTRO)
    .replace(
      /(## Summary\n\n```text\n)[\s\S]*?\n```/,
      (_match, head: string) => `${head}${summaryLines({ results }).join('\n')}\n\`\`\``,
    );
  for (const section of sections) {
    const heading = section[0]!;
    const body = `${section.join('\n')}\n\n`;
    const start = text.indexOf(`\n${heading}\n`);
    if (start === -1) {
      const before = text.indexOf('\n## DynamoDB per SMS\n');
      text =
        before === -1 ? `${text.trimEnd()}\n\n${body}` : `${text.slice(0, before + 1)}${body}${text.slice(before + 1)}`;
    } else {
      const next = text.indexOf('\n## ', start + 1);
      text = `${text.slice(0, start + 1)}${body}${next === -1 ? '' : text.slice(next + 1)}`;
    }
  }
  return text;
}

/** The fixed monthly cost of prod's stack, as a range: "$10.1–$19.1". */
function fixedRange(): string {
  const { usd: total } = fixedMonthlyCost(PROD_FIXED);
  return `$${total.low.toFixed(1)}–${total.high.toFixed(1)}`;
}

/** BENCHMARKS.md's fixed monthly cost: prod's stack whatever the SMS, line by line. */
function fixedSection(): string[] {
  const fixed = fixedMonthlyCost(PROD_FIXED);
  return [
    '### Fixed, a month (prod)',
    '',
    "What prod's stack costs whatever the SMS: its template's alarms (a metric-math alarm bills each metric it reads), dashboard and secrets, the custom metrics (the sweeper's gauges and the balance watch's every hour; the metrics every SMS publishes, service-wide and per route, only in the hours they are published: the range runs from none of them to all of them every hour, and from a free dashboard to a billed one), and the sweeper's run a minute (its duration, reads and log bytes assumed, see `PROD_FIXED` in bench/cost.ts).",
    '',
    ...table(
      ['item', 'quantity', 'USD a month'],
      [
        ...fixed.lines.map((line) => [line.item, line.quantity, `$${line.usd.toFixed(2)}`]),
        ['**total**', '', `**${fixedRange()}**`],
      ],
    ),
    '',
    'A review estimated ≈ $0.022–0.025 per 1,000 SMS plus $9–18 a month. The fixed part agrees; per SMS this is lower because DynamoDB on-demand writes cost $0.625 a million since November 2024 (half the $1.25 often still quoted), the state index entries stay under 1 KB (a 32 KB send answer in them would have cost up to 32 units a change), and the logs measured are about 4 KB an SMS.',
  ];
}

/**
 * BENCHMARKS.md's AWS cost per 1,000 SMS up to its prices: the lines, the SMS spend it adds to and
 * the fixed monthly cost. Rendered by a whole run and again by `--only dynamoPerSms`, which the
 * cost comes with.
 */
export function costSection(total: BenchResults['awsCostPer1000Sms'], cost: BenchRun['cost']): string[] {
  const smsUsd = (1000 * SMS_PRICE_TZS) / TZS_PER_USD;
  return [
    '## AWS cost per 1,000 SMS',
    '',
    `One webhook per SMS: one HTTP API request and one ingest invocation per webhook, one sender invocation per SMS (a stream batch of one, the low-traffic case). Lambda duration is the median measured above rounded up to the millisecond as Lambda bills, at the stack's memory sizes (\`DEFAULT_MEMORY_MB\`, Arm), and the sender's wait for the SMS service's answer (\`SERVICE_ANSWER_MS\`: the loopback sandbox answers at once, a real service in 0.1–0.5 s; the slow end is taken); DynamoDB on-demand for the reported table units plus the estimated index writes; CloudWatch Logs for the bytes each SMS writes (\`LOG_BYTES_PER_SMS\`: ingest's and the sender's lines measured from the deployed bundles by test/integration/aws-log-bytes.test.ts, Lambda's START/END/REPORT lines and the API's access log line). Custom metrics are billed by the month, not by the datapoint (the relay writes them as embedded-format log lines, counted in the log bytes): they are in the fixed cost below, with the alarms, the dashboard, the secrets and the sweeper's run a minute. Storage (the records, point-in-time recovery, log retention of a month) is left out: cents a month at these volumes.`,
    '',
    ...table(
      ['item', 'quantity', 'USD'],
      [
        ...cost.lines.map((line) => [line.item, line.quantity, usd(line.usd)]),
        ['**total**', '', `**${usd(total.usd)}**`],
      ],
    ),
    '',
    `The SMS themselves cost ${SMS_PRICE_TZS} TZS each at the sandbox's price: 1,000 SMS = ${(1000 * SMS_PRICE_TZS).toLocaleString('en-US')} TZS = $${smsUsd.toFixed(2)} at an assumed ${TZS_PER_USD.toLocaleString('en-US')} TZS per US dollar (a round figure near the Bank of Tanzania mid-rate of the second half of 2025, about 2,450–2,550; assumed on 2026-11-24, not fetched). AWS adds ${percent(total.shareOfSmsSpend)} to the SMS spend (\`shareOfSmsSpend\`).`,
    '',
    `Every 100 ms more or less of the sender's wait at ${cost.memoryMb['sender']} MB moves the total by ${usd(1000 * 0.1 * ((cost.memoryMb['sender'] ?? 0) / 1024) * PRICES.lambdaArmPerGbSecond)} per 1,000 SMS. At higher traffic a stream batch carries up to 10 records, so fewer sender requests (the waits stay). Routes with limits or a reserve add their writes (see DynamoDB per SMS): about 1–4 write units, $0.0006–0.0025 per 1,000 SMS.`,
    '',
    ...fixedSection(),
    '',
    '### Prices (us-east-1)',
    '',
    ...table(
      ['what', 'price', 'source'],
      [
        [
          'Lambda duration, Arm',
          `$${PRICES.lambdaArmPerGbSecond} per GB-s, billed per 1 ms`,
          '[AWS Lambda pricing](https://aws.amazon.com/lambda/pricing/)',
        ],
        ['Lambda requests', `$${PRICES.lambdaPerMillionRequests} per million`, 'same'],
        [
          'API Gateway HTTP API',
          `$${PRICES.httpApiPerMillionRequests.toFixed(2)} per million (first 300 million a month)`,
          '[Amazon API Gateway pricing](https://aws.amazon.com/api-gateway/pricing/); also [awsforengineers.com, 19 May 2025](https://awsforengineers.com/blog/aws-api-gateway-pricing-explained)',
        ],
        [
          'DynamoDB on-demand writes',
          `$${PRICES.dynamoPerMillionWriteUnits} per million WRU`,
          '[DynamoDB on-demand pricing](https://aws.amazon.com/dynamodb/pricing/on-demand/): the rate after the 50 % cut of 1 Nov 2024, per [Airbyte, 21 Jul 2025](https://airbyte.com/data-engineering-resources/dynamodb-pricing)',
        ],
        ['DynamoDB on-demand reads', `$${PRICES.dynamoPerMillionReadUnits} per million RRU`, 'same'],
      ],
    ),
    '',
    'Prices as published for us-east-1, checked on 2026-11-24 against stored copies of the pages above (the AWS pages carry no date of their own). The figure is for us-east-1; for another region (eu-west-1, say) put its prices from the same pages into `PRICES` in bench/cost.ts.',
    '',
  ];
}
