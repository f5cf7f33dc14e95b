/**
 * `npm run bench` (`tsx bench/run.ts`): runs every benchmark, prints the figures and their ratios
 * to the baselines measured in the same run, writes `bench/results.json` and `BENCHMARKS.md`.
 *
 * Order: the in-process CPU benchmark first (clean heap), then the cold starts (child processes
 * only), then the benchmarks that need dynalite and the sandbox, which share one services process.
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { runAccept } from './accept';
import { runColdInit } from './cold-init';
import { runCost } from './cost';
import { createWorkspace, progress, REPO_ROOT, startServices } from './harness';
import { runPipeline } from './pipeline';
import { runProviderCalls } from './provider-calls';
import { renderReport, summaryLines, type BenchResults } from './report';
import { round } from './stats';

/** The targets of each figure. */
export const TARGETS = {
  pipelineRatio: 3,
  coldInitRatio: 1.5,
  acceptRatio: 2,
  costPerMillionUsd: 2.5,
} as const;

async function main(): Promise<void> {
  const started = Date.now();
  const loadBefore = loadavg();
  // The AWS SDK warns once per process about Node 20; it says nothing about the measurement.
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

  const sections: Record<string, number> = {};
  let mark = Date.now();
  const lap = (name: string): void => {
    sections[name] = round((Date.now() - mark) / 1000, 1);
    mark = Date.now();
    progress(`${name} done in ${sections[name]} s`);
  };

  progress('pipeline…');
  const pipeline = runPipeline();
  lap('pipeline');
  progress(`pipeline: ${pipeline.result.medianMicros} µs vs floor ${pipeline.result.floorMedianMicros} µs`);

  progress('cold init…');
  const coldInit = await runColdInit();
  lap('coldInit');

  progress('starting dynalite and the sandbox…');
  const services = await startServices();
  const workspace = createWorkspace();
  let accept;
  let providerCalls;
  let cost;
  try {
    progress('accept…');
    accept = await runAccept({ services, workspace });
    lap('accept');
    progress('provider calls…');
    providerCalls = await runProviderCalls({ services, workspace });
    lap('providerCalls');
    progress('cost…');
    cost = await runCost({ services, workspace });
    lap('cost');
  } finally {
    await services.close();
    workspace.cleanup();
  }

  const coldInitRatios = Object.values(coldInit.result).map((entry) => entry.ratio);
  const results: BenchResults = {
    pipeline: pipeline.result,
    coldInit: coldInit.result,
    accept: accept.result,
    providerCalls: providerCalls.result,
    costPerMillionUsd: cost.result,
    targets: {
      pipeline: { target: `ratio ≤ ${TARGETS.pipelineRatio}`, met: pipeline.result.ratio <= TARGETS.pipelineRatio },
      coldInit: { target: `every ratio ≤ ${TARGETS.coldInitRatio}`, met: coldInitRatios.every((value) => value <= TARGETS.coldInitRatio) },
      accept: { target: `ratio ≤ ${TARGETS.acceptRatio}`, met: accept.result.ratio <= TARGETS.acceptRatio },
      providerCalls: { target: 'observed = optimal', met: providerCalls.result.observed <= providerCalls.result.optimal },
      costPerMillionUsd: { target: `≤ $${TARGETS.costPerMillionUsd.toFixed(2)}`, met: cost.result <= TARGETS.costPerMillionUsd },
    },
    meta: {
      date: new Date(started).toISOString(),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGb: round(totalmem() / 1024 ** 3, 1),
      loadAverageBefore: loadBefore.map((value) => round(value, 2)),
      loadAverageAfter: loadavg().map((value) => round(value, 2)),
      durationSeconds: round((Date.now() - started) / 1000, 1),
      sectionSeconds: sections,
    },
    details: {
      pipeline: pipeline.details,
      coldInit: coldInit.details,
      accept: accept.details,
      providerCalls: providerCalls.details,
      cost: cost.details,
    },
  };

  writeFileSync(join(REPO_ROOT, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(REPO_ROOT, 'BENCHMARKS.md'), renderReport(results));
  process.stdout.write(`${summaryLines(results).join('\n')}\n\nwrote bench/results.json and BENCHMARKS.md (${results.meta.durationSeconds} s)\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
