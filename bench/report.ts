/**
 * `BENCHMARKS.md`, generated from the results of a run (so the document and `bench/results.json`
 * always agree), and the summary printed at the end of `npm run bench`. The price citations are
 * static text here: they change only when someone checks the published prices again.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HandlerName } from '../infra/bundle';
import type { AcceptDetails, AcceptResult } from './accept';
import type { ColdInitDetails, ColdInitEntry } from './cold-init';
import { PRICES, type CostDetails } from './cost';
import type { PipelineDetails, PipelineResult } from './pipeline';
import type { ProviderCallsDetails, ProviderCallsResult } from './provider-calls';
import { median } from './stats';

export interface TargetStatus {
  readonly target: string;
  readonly met: boolean;
}

export interface BenchResults {
  readonly pipeline: PipelineResult;
  readonly coldInit: Readonly<Record<HandlerName, ColdInitEntry>>;
  readonly accept: AcceptResult;
  readonly providerCalls: ProviderCallsResult;
  readonly costPerMillionUsd: number;
  readonly targets: Readonly<Record<'pipeline' | 'coldInit' | 'accept' | 'providerCalls' | 'costPerMillionUsd', TargetStatus>>;
  readonly meta: {
    readonly date: string;
    readonly node: string;
    readonly platform: string;
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryGb: number;
    readonly loadAverageBefore: readonly number[];
    readonly loadAverageAfter: readonly number[];
    readonly durationSeconds: number;
    readonly sectionSeconds: Readonly<Record<string, number>>;
  };
  readonly details: {
    readonly pipeline: PipelineDetails;
    readonly coldInit: ColdInitDetails;
    readonly accept: AcceptDetails;
    readonly providerCalls: ProviderCallsDetails;
    readonly cost: CostDetails;
  };
}

/** When the prices below were looked up. */
export const PRICES_CHECKED = '2026-11-22';

/**
 * The published prices the cost model uses, with where they were read. Static: update the date
 * above and `PRICES` in cost.ts together.
 */
export const PRICE_CITATIONS = `| What | Price (us-east-1) | Source |
|---|---|---|
| Lambda duration, Arm (Graviton) | $0.0000133334 per GB-second (first 7.5 billion GB-s a month); billed per 1 ms, rounded up | [AWS Lambda pricing](https://aws.amazon.com/lambda/pricing/); same figures in the [Cloudchipr 2024 Lambda pricing guide](https://cloudchipr.com/blog/aws-lambda-pricing) |
| Lambda requests | $0.20 per million | [AWS Lambda pricing](https://aws.amazon.com/lambda/pricing/) |
| Lambda CPU share | 1,769 MB = one vCPU, proportional below (used only for the CPU-share estimate) | [Lambda developer guide, "Configure Lambda function memory"](https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html) |
| API Gateway HTTP API | $1.00 per million requests (first 300 million a month); metered in 512 KB increments | [Amazon API Gateway pricing](https://aws.amazon.com/api-gateway/pricing/); [awsforengineers.com, 19 May 2025](https://awsforengineers.com/blog/aws-api-gateway-pricing-explained); 512 KB metering: [stormit.cloud](https://www.stormit.cloud/blog/amazon-api-gateway-pricing) |
| DynamoDB on-demand writes (Standard table class) | $0.625 per million write request units (1 WRU = a write of up to 1 KB) | [DynamoDB on-demand pricing](https://aws.amazon.com/dynamodb/pricing/on-demand/); the rate after the 50 % on-demand reduction of 1 Nov 2024, per [Airbyte, 21 Jul 2025](https://airbyte.com/data-engineering-resources/dynamodb-pricing) |
| DynamoDB on-demand reads | $0.125 per million read request units (1 RRU = a strongly consistent read of up to 4 KB; eventually consistent: ½) | same |
| DynamoDB global secondary index writes | one index write per put/delete of an index entry, two when an update changes the index key | [DynamoDB developer guide, GSI writes](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes) |
| DynamoDB Streams | GetRecords made by a Lambda trigger are not charged | [DynamoDB developer guide, "Evaluate your DynamoDB streams usage"](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CostOptimization_StreamsUsage.html); [DynamoDB pricing](https://aws.amazon.com/dynamodb/pricing/on-demand/) |
| CloudWatch Logs ingestion | $0.50 per GB (Standard class; for Lambda logs the first tier of the volume tiers introduced 1 May 2025) | [Amazon CloudWatch pricing](https://aws.amazon.com/cloudwatch/pricing/); [Duckbill Group on the May 2025 Lambda logs change](https://www.duckbillgroup.com/?p=9080) |
| EventBridge scheduled rules | events from AWS services, schedules included, are not charged (custom events $1.00 per million) | [Amazon EventBridge pricing](https://aws.amazon.com/eventbridge/pricing/); [wring.co EventBridge pricing guide](https://www.wring.co/blog/aws-eventbridge-pricing-guide) |

Prices checked on ${PRICES_CHECKED} (from stored copies of the pages above; the AWS pages carry no date of their own).`;

const HANDLERS: readonly HandlerName[] = ['ingest', 'sender', 'sweeper', 'balance-watch'];

const status = (met: boolean): string => (met ? 'met' : '**missed**');
const kib = (bytes: number): string => `${(bytes / 1024).toFixed(0)} KiB`;
const usd = (value: number, digits = 2): string => `$${value.toFixed(digits)}`;
const fmt = (value: number, digits = 1): string => value.toFixed(digits);
const table = (header: readonly string[], rows: readonly (readonly string[])[]): string =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');

/** The lines printed at the end of a run. */
export function summaryLines(results: BenchResults): string[] {
  const { pipeline, coldInit, accept, providerCalls, costPerMillionUsd, targets } = results;
  const rows: string[][] = [
    ['pipeline (µs/webhook)', fmt(pipeline.medianMicros, 1), `${fmt(pipeline.floorMedianMicros, 1)} JSON.parse+HMAC`, `${pipeline.ratio}×`, targets.pipeline.target, targets.pipeline.met ? 'met' : 'MISSED'],
    ...HANDLERS.map((name) => [`cold init ${name} (ms)`, fmt(coldInit[name].ms), `${fmt(coldInit[name].baselineMs)} SDK clients only`, `${coldInit[name].ratio}×`, targets.coldInit.target, coldInit[name].ratio <= 1.5 ? 'met' : 'MISSED']),
    ['accept p50 / p99 (ms)', `${fmt(accept.p50Ms)} / ${fmt(accept.p99Ms)}`, `${fmt(accept.putItemP50Ms)} PutItem p50`, `${accept.ratio}×`, targets.accept.target, targets.accept.met ? 'met' : 'MISSED'],
    ['provider calls', String(providerCalls.observed), `${providerCalls.optimal} optimal`, '', targets.providerCalls.target, targets.providerCalls.met ? 'met' : 'MISSED'],
    ['cost per 1M webhooks', usd(costPerMillionUsd), '', '', targets.costPerMillionUsd.target, targets.costPerMillionUsd.met ? 'met' : 'MISSED'],
  ];
  const header = ['figure', 'measured', 'baseline', 'ratio', 'target', 'status'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)];
}

function pipelineSection(results: BenchResults): string {
  const { pipeline } = results;
  const details = results.details.pipeline;
  const stages = Object.entries(details.stagesMicros).sort((a, b) => b[1] - a[1]);
  const stageSum = stages.reduce((sum, [, value]) => sum + value, 0);
  const names: Record<string, string> = {
    authenticate: 'authenticate (Bearer, constant-time compare)',
    parse: 'parse (UTF-8 decode + JSON.parse; the floor has the same)',
    dedupeKey: 'dedupe key (SHA-256 of group, status, fingerprints)',
    when: "`when` condition (Liquid expression)",
    render: 'render (Liquid template)',
    recipients: 'recipients (Liquid for the templated one + libphonenumber-js)',
    fitting: 'fitting (GSM-7 check, segment count)',
  };
  const out = [
    `## Pipeline — ${pipeline.medianMicros} µs per webhook, ${pipeline.ratio}× the floor (target ≤ 3: ${status(results.targets.pipeline.met)})`,
    '',
    `\`evaluateWebhook\` on the \`alerts\` route of the bench config (Alertmanager, Bearer credential, \`when: status == 'firing'\`, a Liquid template with a condition and filters, one literal and one templated recipient) for a grouped notification of ${details.bodyBytes} bytes (3 alerts) that plans ${details.messages} SMS to ${details.recipients} recipients: \`${details.text}\`.`,
    `Floor: \`JSON.parse\` of the same body (decoded from bytes) plus one HMAC-SHA256 over it. ${details.batches} batches of ${details.batch} per side, interleaved, after a warm-up; median of the batch means.`,
    '',
    table(['', 'µs per webhook'], [['pipeline (`evaluateWebhook`)', fmt(pipeline.medianMicros, 2)], ['floor (JSON.parse + HMAC-SHA256)', fmt(pipeline.floorMedianMicros, 2)], ['ratio', `${pipeline.ratio}×`]]),
    '',
    `Where the time goes: each stage timed alone on the same inputs (same method, a separate and shorter run, so the stages need not add up to the figure; here they sum to ${fmt(stageSum, 0)} µs):`,
    '',
    table(['stage', 'µs', 'share of stage sum'], stages.map(([name, value]) => [names[name] ?? name, fmt(value, 1), `${fmt((100 * value) / stageSum, 0)} %`])),
  ];
  if (!results.targets.pipeline.met) {
    const [first, second, third] = stages;
    out.push(
      '',
      `**Why the target is missed.** The floor is two native operations; the pipeline runs three LiquidJS evaluations per webhook (the \`when\`, the template, the templated recipient) and a libphonenumber-js parse. The largest stages are ${[first, second, third].filter((entry) => entry !== undefined).map(([name, value]) => `${name} (${fmt(value, 0)} µs)`).join(', ')}; parse is the floor's own work.`,
      '',
      '**What would close it:**',
      '- Compile `when` conditions and plain templates (`{{ a.b | default: … | upcase }}`, `{% if %}`) to JavaScript closures at config load and keep LiquidJS as the fallback for templates that need it: the expression is parsed once already, but every evaluation still goes through Liquid\'s render context, filter pipeline and output buffer.',
      '- Build the template scope once per item and share it between the condition, the template and the recipients (today each builds its own view of the body).',
      '- Cache normalised recipients by their rendered text (a small LRU): the templated on-call number is the same string on most webhooks, and libphonenumber-js parses it from scratch each time; or normalise Tanzanian numbers with a regular expression first and fall back to libphonenumber-js only for what it rejects.',
    );
  }
  return out.join('\n');
}

function coldInitSection(results: BenchResults): string {
  const { coldInit } = results;
  const details = results.details.coldInit;
  const ingestFamilies = Object.entries(details.bundles['ingest']?.byFamily ?? {});
  const total = ingestFamilies.reduce((sum, [, bytes]) => sum + bytes, 0);
  const out = [
    `## Cold init — ${HANDLERS.map((name) => `${name} ${coldInit[name].ratio}×`).join(', ')} (target every ratio ≤ 1.5: ${status(results.targets.coldInit.met)})`,
    '',
    `Each figure is the median of ${details.runs} fresh \`node\` processes timing \`await import(bundle)\` from inside (Node's own start-up excluded). The handlers are the deployed bundles (\`bundleHandlers\`, minified) staged as the stack deploys them (\`stageFunctionAsset\`: the bundle plus \`config/prod.yaml\` validated and staged as \`relay-config.json\`) and loaded with the stack's Lambda environment, so \`prepareOnLambda()\` builds the relay runtime during the import as in Lambda's init phase (config parsed and validated, templates and recipients compiled, clients and Powertools created; nothing touches the network). The baseline is a bundle built with the same esbuild options that only imports and constructs the SDK clients the handler contains (found in the esbuild metafile). Handler and baseline processes alternate.`,
    '',
    table(
      ['handler', 'import + init (ms)', 'baseline (ms)', 'ratio', 'module evaluation only (ms)', 'runtime build (difference, ms)', 'bundle', 'baseline bundle', 'SDK clients', 'memory'],
      HANDLERS.map((name) => [
        name,
        fmt(coldInit[name].ms),
        fmt(coldInit[name].baselineMs),
        `${coldInit[name].ratio}×`,
        fmt(details.moduleOnlyMs[name] ?? Number.NaN),
        fmt(coldInit[name].ms - (details.moduleOnlyMs[name] ?? Number.NaN)),
        kib(details.bundles[name]?.bytes ?? 0),
        kib(details.bundles[name]?.baselineBytes ?? 0),
        (details.bundles[name]?.sdkClients ?? []).map((pkg) => pkg.replace('@aws-sdk/client-', '')).join(', '),
        `${details.memoryMb[name]} MB`,
      ]),
    ),
    '',
    `"Module evaluation only" loads the same bundle without the Lambda environment (the runtime is then built by the first invocation instead; median of ${Math.min(details.runs, details.detailRuns)} processes); the difference to the first column is the runtime build: reading the staged JSON config, compiling what the handler needs of it (templates, conditions and recipients for ingest), creating the clients.`,
    '',
    `What the ingest bundle is made of (bytes in the minified output, esbuild metafile):`,
    '',
    table(['package', 'bytes', 'share'], ingestFamilies.map(([name, bytes]) => [name, kib(bytes), `${fmt((100 * bytes) / total, 0)} %`])),
    '',
    'Cold import of single libraries, bundled the same way (median of fresh processes):',
    '',
    table(['library', 'ms'], Object.entries(details.librariesMs).map(([name, ms]) => [name, fmt(ms)])),
  ];
  if (!results.targets.coldInit.met) {
    const libraries = Object.entries(details.librariesMs).filter(([name]) => !name.startsWith('AWS SDK')).sort((a, b) => b[1] - a[1]);
    const sdkBytes = ingestFamilies.find(([name]) => name === 'AWS SDK (+ smithy)')?.[1] ?? 0;
    const otherBytes = total - sdkBytes;
    const build = median(HANDLERS.map((name) => coldInit[name].ms - (details.moduleOnlyMs[name] ?? 0)));
    out.push(
      '',
      `**Why the target is missed.** Every handler bundles part of the relay core on top of the SDK: ${ingestFamilies
        .filter(([name]) => name !== 'AWS SDK (+ smithy)')
        .slice(0, 4)
        .map(([name, bytes]) => `${name} ${kib(bytes)}`)
        .join(', ')} in ingest — ${kib(otherBytes)} besides the SDK's ${kib(sdkBytes)}, all parsed and evaluated at load — and the runtime build takes about ${fmt(build, 0)} ms (median of the differences above). The config is validated at synth and staged as JSON, so no handler loads \`yaml\` or \`zod\`, and the sender and balance watch compile no template. Ingest must compile the routes' templates (LiquidJS alone: ${fmt(libraries.find(([name]) => name === 'liquidjs')?.[1] ?? 0, 0)} ms) and keep libphonenumber-js for templated recipients; the sweeper still builds the routes it needs for limit summaries.`,
      '',
      '**What would close it:**',
      '- Ingest: compile templates at synth into the staged config (the fast-path closures as generated code), so LiquidJS loads only as the fallback, on first use; load the Secrets Manager client lazily (dynamic `import()` on the first secret read), which keeps it out of the init phase.',
      "- Sweeper: read the routes' literal numbers and limits from the staged JSON (normalised at synth) instead of compiling routes.",
    );
  }
  return out.join('\n');
}

function acceptSection(results: BenchResults): string {
  const { accept } = results;
  const details = results.details.accept;
  const ingestOps = Object.entries(results.details.cost.dynamo).filter(([key]) => key.startsWith('ingest '));
  const out = [
    `## Accept — p50 ${fmt(accept.p50Ms, 2)} ms, p99 ${fmt(accept.p99Ms, 2)} ms; ${accept.ratio}× a bare PutItem (target ≤ 2: ${status(results.targets.accept.met)})`,
    '',
    `The ingest handler, in process, invoked with API Gateway v2 events of signed Shopify \`orders/create\` webhooks (${details.bodyBytes} bytes, HMAC-SHA256, each with its own event id so all are accepted), ${details.concurrency} in flight, context built from the environment against dynalite (in its own process). Baseline: one \`PutItem\` of a ~700-byte item on the same dynalite table, same concurrency, same client configuration. ${details.requests} requests a side${details.budgetExhausted ? ' (cut short by the time budget; the machine was too loaded for 2000)' : ''}, after ${details.warmup} of warm-up, in alternating rounds of ${details.roundSize}. All answers were ${Object.entries(details.statuses).map(([code, count]) => `${code} × ${count}`).join(', ')}. The ratio of the p50s is the figure; the median over round pairs of each pair's ratio, which load drifting during the run cannot tilt, was ${details.pairedRatioMedian}×.`,
    '',
    table(
      ['', 'p50 (ms)', 'p90 (ms)', 'p99 (ms)', 'max (ms)', 'mean (ms)'],
      [
        ['ingest handler', fmt(details.ingest.p50, 2), fmt(details.ingest.p90, 2), fmt(details.ingest.p99, 2), fmt(details.ingest.max, 2), fmt(details.ingest.mean, 2)],
        ['bare PutItem', fmt(details.putItem.p50, 2), fmt(details.putItem.p90, 2), fmt(details.putItem.p99, 2), fmt(details.putItem.max, 2), fmt(details.putItem.mean, 2)],
      ],
    ),
    '',
    'DynamoDB requests ingest issues per webhook of the mix (from the cost run), in sequence:',
    '',
    table(['operation', 'per webhook'], ingestOps.map(([key, entry]) => [key.replace(/^ingest /, ''), fmt(entry.count, 2)])),
  ];
  if (!results.targets.accept.met) {
    out.push(
      '',
      '**Why the target is missed.** An accepted webhook costs two sequential DynamoDB round trips, not one: the conditional put of the dedupe guard, then the conditional puts of its message records, concurrently (each also written to both indexes). At 16 in flight on one DynamoDB endpoint the latency is mostly queueing for that work, so the ratio tracks the number of writes (plus the pipeline\'s CPU) rather than any single slow step.',
      '',
      '**What would close it:**',
      '- On AWS, write the guard and the message records in one `TransactWriteItems` (one round trip; the guard\'s condition still decides duplicates); keep the ordered two-step path only for dynalite, which has no transactions. Transactional writes cost 2× WRU, so weigh against the cost figure: the alternative below does not.',
      '- For the common single-message webhook, make the message record its own dedupe guard (one conditional `PutItem` keyed by route and dedupe key, holding the message) so an accept is one write; the guard item is only needed when a webhook fans out.',
      '- Not an option: answering 202 before the records are written — the relay promises that they exist when it says 202.',
    );
  }
  return out.join('\n');
}

function providerSection(results: BenchResults): string {
  const { providerCalls } = results;
  const details = results.details.providerCalls;
  return [
    `## Provider calls — ${providerCalls.observed} for an optimum of ${providerCalls.optimal} (${status(results.targets.providerCalls.met)})`,
    '',
    `The fixed mix of ${details.webhooks} webhooks (\`webhookMix()\` in \`bench/harness.ts\`) through the ingest handler, then the PENDING records the stream would deliver (${details.pendingRecords}) through the sender handler in batches of 10 (${details.senderInvocations} invocations), against the sandbox SMS service, which counted the \`POST /v1/sms/send\` requests. Optimum: one call per SMS part carrying all of that part's recipients; duplicates and filtered webhooks none. The mix's part counts are checked against the relay's own evaluation before the run.`,
    '',
    table(['kind', 'optimal calls'], Object.entries(details.optimalByKind).map(([kind, calls]) => [kind, String(calls)])),
    '',
    `Ingest answers: ${Object.entries(details.statuses).map(([code, count]) => `${code} × ${count}`).join(', ')}. The sandbox delivered ${details.deliveredMessages} messages (${details.distinctTexts} distinct texts) to ${details.recipientDeliveries} recipients in total: every grouped message went out in one call to all of its recipients.`,
  ].join('\n');
}

function costSection(results: BenchResults): string {
  const cost = results.details.cost;
  const { inputs } = cost;
  const lines = [...cost.lines].sort((a, b) => b.usd - a.usd);
  const total = cost.lines.reduce((sum, line) => sum + line.usd, 0);
  const dynamoRows = Object.entries(cost.dynamo).map(([key, entry]) => [key, fmt(entry.count, 3), fmt(entry.wru, 3), fmt(entry.indexWru, 3), fmt(entry.rru, 3)]);
  const out = [
    `## Cost — ${usd(results.costPerMillionUsd)} per million webhooks (target ≤ $2.50: ${status(results.targets.costPerMillionUsd.met)})`,
    '',
    `AWS cost of one million webhooks of the provider-calls mix (us-east-1, on-demand, SMS credit excluded), from the published prices below and quantities measured in this run: handler durations of ${cost.webhooksMeasured} webhooks in process with a warm context (median, rounded up to 1 ms as Lambda bills), memory from \`DEFAULT_MEMORY_MB\` of the CDK construct, DynamoDB units from the commands the handlers actually issued (an HTTP proxy in front of dynalite applies DynamoDB's size and index rules, \`bench/dynamo-meter.ts\`), and log bytes the handlers wrote plus Lambda's and API Gateway's own lines.`,
    '',
    table(
      ['item', 'quantity per 1M webhooks', 'price', 'USD', 'share'],
      lines.map((line) => [line.item, `${line.quantity.toLocaleString('en-US', { maximumFractionDigits: 2 })} ${line.unit}`, line.priceUnit === 'free' ? 'free' : `${usd(line.unitPrice, line.unitPrice < 0.01 ? 10 : 3)} ${line.priceUnit}`, usd(line.usd, 4), `${fmt((100 * line.usd) / total, 0)} %`]),
    ),
    `| **total** | | | **${usd(results.costPerMillionUsd)}** | |`,
    '',
    'Model inputs (per webhook of the mix):',
    '',
    table(
      ['input', 'value', 'how'],
      [
        ['ingest invocations', fmt(inputs.ingestInvocationsPerWebhook, 3), 'one per webhook'],
        ['sender invocations', fmt(inputs.senderInvocationsPerWebhook, 3), 'one per PENDING record (a stream batch of one: the low-traffic case)'],
        ['ingest duration', `${fmt(inputs.ingestMs, 2)} ms → billed ${Math.max(1, Math.ceil(inputs.ingestMs))} ms at ${inputs.memoryMb.ingest} MB`, `median of ${cost.ingest.invocations} invocations (mean ${fmt(cost.ingest.meanMs, 1)} ms, CPU ${fmt(cost.ingest.medianCpuMs, 1)} ms)`],
        ['sender duration', `${fmt(inputs.senderMs, 2)} ms → billed ${Math.max(1, Math.ceil(inputs.senderMs))} ms at ${inputs.memoryMb.sender} MB`, `median of ${cost.sender.invocations} invocations (mean ${fmt(cost.sender.meanMs, 1)} ms, CPU ${fmt(cost.sender.medianCpuMs, 1)} ms); the sandbox answers on loopback`],
        ['API Gateway requests', fmt(inputs.apiRequestsPerWebhook, 0), 'bodies far below 512 KB'],
        ['write request units', fmt(inputs.writeUnitsPerWebhook, 3), `table ${fmt(cost.dynamoTotals.tableWru, 3)} + indexes ${fmt(cost.dynamoTotals.indexWru, 3)}`],
        ['read request units', fmt(inputs.readUnitsPerWebhook, 3), 'strongly consistent reads ×1, eventually consistent ×½'],
        ['log bytes', fmt(inputs.logBytesPerWebhook, 0), `handlers ${fmt(cost.log.handlerBytesPerWebhook, 0)} (Powertools JSON + EMF metrics; ingest ${fmt(cost.ingest.logBytesPerInvocation, 0)} B/invocation, sender ${fmt(cost.sender.logBytesPerInvocation, 0)} B/invocation) + Lambda START/END/REPORT ${fmt(cost.log.platformBytesPerWebhook, 0)} + API access log ${fmt(cost.log.accessLogBytesPerWebhook, 0)}`],
      ],
    ),
    '',
    'DynamoDB requests per webhook, by handler, operation and item (WRU: table; index WRU: both GSIs, `byState` projecting ALL, `byRoute` keys only):',
    '',
    table(['handler, operation, item', 'requests', 'WRU', 'index WRU', 'RRU'], dynamoRows),
    '',
    `Sensitivity: Lambda at ${inputs.memoryMb.ingest} MB has ${fmt((100 * inputs.memoryMb.ingest) / 1769, 0)} % of a vCPU. Stretching the measured CPU time by 1769/memory (and keeping the rest of the wall time) gives ingest ${fmt(cost.cpuShareEstimate.ingestMs, 0)} ms, sender ${fmt(cost.cpuShareEstimate.senderMs, 0)} ms and ${usd(cost.cpuShareEstimate.totalUsd)} per million. Each 100 ms the real provider takes beyond the loopback sandbox adds ${usd(cost.usdPer100msSenderLatency)} per million webhooks.`,
    '',
    'Not in the figure (they do not scale with webhooks): the sweeper (every minute) and balance-watch schedules, Secrets Manager ($0.40 a secret a month; reads are cached 5 minutes per container), CloudWatch custom metrics, alarms and the dashboard, DynamoDB storage (records kept `retentionDays`), data transfer to the SMS provider.',
  ];
  if (!results.targets.costPerMillionUsd.met) {
    const [first, second, third] = lines;
    // Per webhook × price per million = dollars per million webhooks.
    const indexUsd = cost.dynamoTotals.indexWru * PRICES.dynamoWriteRequestUnitsPerMillion;
    const fixed = inputs.apiRequestsPerWebhook * PRICES.httpApiRequestsPerMillion + (inputs.ingestInvocationsPerWebhook + inputs.senderInvocationsPerWebhook) * PRICES.lambdaRequestsPerMillion;
    out.push(
      '',
      `**Why the target is missed.** The largest items are ${[first, second, third].filter((line) => line !== undefined).map((line) => `${line.item} (${usd(line.usd)})`).join(', ')}. Of ${fmt(inputs.writeUnitsPerWebhook, 1)} WRU per webhook, ${fmt(cost.dynamoTotals.indexWru, 1)} (${usd(indexUsd)}) are index writes: every message record is in both GSIs, so a message that is sent at once costs 5 \`byState\` writes (the insert, then a delete and a put on each state change PENDING → SENDING → SENT, as its sort key \`updatedAt\` changes every time) and 1 \`byRoute\` write (the insert: that index holds keys only, which never change). The table writes are the dedupe guard (one put), the record, the claim and the SENT update, and per send the limit window, the route's day and the global day counters. Requests alone — API Gateway and Lambda — are ${usd(fixed)} of the $2.50.`,
      '',
      `**What would close it** (no single change; the request charges leave ${usd(2.5 - fixed)} for everything else):`,
      '- `byState`: make it sparse — index a record while it needs the sweeper (PENDING, and again when parked, held, failed or retried) through an attribute removed when the sender claims it: 2 instead of 5 writes per message sent at once.',
      '- Merge the per-send counters (route day spend and global day spend into one item, the limit window reserved in the same update as the claim where the route has limits).',
      '- Logs: one INFO line per webhook and per send at most, no per-route single-metric EMF lines on the hot path (publish the route dimension from the service-level line), and the Infrequent Access log class ($0.25/GB) for function logs; drop API Gateway access logs or trim their fields.',
      '- API Gateway: a Lambda function URL has no per-request charge; the relay authenticates every route itself, so the gateway mainly adds throttling.',
    );
  }
  return out.join('\n');
}

/** The whole BENCHMARKS.md. */
export function renderReport(results: BenchResults): string {
  const { meta, targets } = results;
  const summary = summaryLines(results);
  const missed = Object.entries(targets).filter(([, entry]) => !entry.met).map(([name]) => name);
  return `${[
    '# Benchmarks',
    '',
    '<!-- Generated by `npm run bench` (bench/report.ts) from bench/results.json. Do not edit by hand: run the bench again. -->',
    '',
    '## How to run',
    '',
    '```sh',
    'npm run bench              # = tsx bench/run.ts: 1½ to 6 minutes on the 2 shared cores, depending on their load',
    'npx tsx bench/report.ts    # regenerate this file from bench/results.json after editing bench/report.ts',
    '```',
    '',
    'It prints the figures and their ratios to baselines measured in the same run, and writes `bench/results.json` (the figures under `pipeline`, `coldInit`, `accept`, `providerCalls`, `costPerMillionUsd`, plus `targets`, `meta` and `details`) and this file. Nothing leaves loopback: DynamoDB is dynalite and the SMS provider is the sandbox, both in a child process (`bench/services.ts`).',
    '',
    '## Machine and method',
    '',
    `Last run ${meta.date}: ${meta.cpus} × ${meta.cpuModel}, ${meta.memoryGb} GB, Node ${meta.node} (${meta.platform}), ${meta.durationSeconds} s (${Object.entries(meta.sectionSeconds).map(([name, seconds]) => `${name} ${seconds} s`).join(', ')}). Load average before ${meta.loadAverageBefore.join(' / ')}, after ${meta.loadAverageAfter.join(' / ')}.`,
    '',
    'The machine is shared with other engineers\' test runs, so absolute times move from run to run (a load average above the core count means the bench got a fraction of the CPU). Every figure therefore has a baseline measured in the same run, interleaved with it (alternating batches, processes or rounds), and the figures are medians or nearest-rank percentiles after warm-ups: the ratios are what to compare between runs, not the milliseconds. Lambda runs Node 22 on Graviton at a fraction of a vCPU; the ratios carry over better than the absolute numbers.',
    '',
    '## Summary',
    '',
    '```text',
    ...summary,
    '```',
    '',
    missed.length === 0 ? 'Every target is met.' : `Targets missed: ${missed.join(', ')} — each section below says why and what would close it.`,
    '',
    pipelineSection(results),
    '',
    coldInitSection(results),
    '',
    acceptSection(results),
    '',
    providerSection(results),
    '',
    costSection(results),
    '',
    '## Prices',
    '',
    PRICE_CITATIONS,
  ].join('\n')}\n`;
}

// `npx tsx bench/report.ts` rewrites BENCHMARKS.md from the last bench/results.json.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(fileURLToPath(import.meta.url), '..', '..');
  const results = JSON.parse(readFileSync(join(root, 'bench', 'results.json'), 'utf8')) as BenchResults;
  writeFileSync(join(root, 'BENCHMARKS.md'), renderReport(results));
  console.log('wrote BENCHMARKS.md from bench/results.json');
}
