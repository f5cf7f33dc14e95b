/**
 * `pipeline`: the core path of one webhook — authenticate, parse, dedupe key, filter, render,
 * recipients, fitting — through `evaluateWebhook`, against the floor any relay pays for the same
 * body: `JSON.parse` of it plus one HMAC-SHA256 over it.
 *
 * Timed in batches (BATCH iterations, per-item time = batch time / BATCH), pipeline and floor
 * batches interleaved (alternating which goes first), so the other tenants of the machine slow both
 * sides alike; the figure is the median of the batch means. A per-stage breakdown (same method)
 * says where the time goes.
 */
import { createHmac } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { loadConfig, type CompiledRoute } from '../functions/core/config/load';
import { fitMessage } from '../functions/core/fitting';
import { evaluateWebhook } from '../functions/core/pipeline/evaluate';
import { resolveRecipients } from '../functions/core/recipients';
import type { InboundWebhook } from '../functions/core/sources/types';
import { buildScope } from '../functions/core/templates';
import { alertmanagerWebhook, BENCH_CONFIG_YAML, SECRETS, type WebhookRequest } from './harness';
import { median, ratio, round } from './stats';

export interface PipelineResult {
  readonly medianMicros: number;
  readonly floorMedianMicros: number;
  readonly ratio: number;
}

export interface PipelineDetails {
  readonly batch: number;
  readonly batches: number;
  readonly bodyBytes: number;
  readonly messages: number;
  readonly recipients: number;
  readonly text: string;
  /** Median µs per webhook of each stage measured alone. */
  readonly stagesMicros: Readonly<Record<string, number>>;
}

export interface PipelineOptions {
  readonly batch?: number;
  readonly batches?: number;
  readonly warmupIterations?: number;
}

const decoder = new TextDecoder();

/** The webhook of the figure: a grouped Alertmanager notification (3 alerts, 2 recipients). */
export function pipelineWebhook(): WebhookRequest {
  return alertmanagerWebhook({ id: 'Pipeline', alerts: 3, oncallPhone: '0754 555 222' });
}

export function inboundOf(request: WebhookRequest, receivedAt = new Date()): InboundWebhook {
  return { body: new TextEncoder().encode(request.body), headers: { ...request.headers }, query: {}, receivedAt };
}

/** Time per item, in µs, of `iterations` calls of `work`. */
function timeBatch(iterations: number, work: () => unknown): number {
  let sink = 0;
  const start = performance.now();
  for (let index = 0; index < iterations; index += 1) if (work() !== undefined) sink += 1;
  const elapsed = performance.now() - start;
  if (sink < 0) console.log(sink);
  return (elapsed * 1000) / iterations;
}

/**
 * Runs the interleaved batches of `subjects` (name → work) and returns each one's median per-item
 * time in µs.
 */
export function interleavedBatches(subjects: Readonly<Record<string, () => unknown>>, { batch, batches, warmupIterations }: Required<PipelineOptions>): Record<string, number> {
  const names = Object.keys(subjects);
  for (const name of names) timeBatch(warmupIterations, subjects[name]!);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < batches; round += 1) {
    // Rotate who goes first, so a slow phase of the machine does not always hit the same side.
    const order = names.map((_, index) => names[(index + round) % names.length]!);
    for (const name of order) samples[name]!.push(timeBatch(batch, subjects[name]!));
  }
  return Object.fromEntries(names.map((name) => [name, median(samples[name]!)]));
}

export function runPipeline({ batch = 200, batches = 60, warmupIterations = 2_000 }: PipelineOptions = {}): { result: PipelineResult; details: PipelineDetails } {
  const { routes } = loadConfig(BENCH_CONFIG_YAML, 'bench config');
  const route = routes.get('alerts') as CompiledRoute;
  const request = pipelineWebhook();
  const webhook = inboundOf(request);
  const secret = SECRETS['alerts-token'];

  const check = evaluateWebhook(route, webhook, { secret });
  if (check.verdict !== 'send' || check.messages.length === 0) throw new Error(`pipeline webhook did not evaluate to send: ${check.verdict} ${check.reason ?? ''}`);

  const options = { batch, batches, warmupIterations };
  const main = interleavedBatches(
    {
      pipeline: () => evaluateWebhook(route, webhook, { secret }),
      floor: () => {
        JSON.parse(decoder.decode(webhook.body));
        return createHmac('sha256', secret).update(webhook.body).digest('hex');
      },
    },
    options,
  );

  // Where the time goes: each stage alone, on the same inputs (shorter run: it is an explanation).
  const body = route.pack.parse(webhook);
  const scope = buildScope({ body, headers: webhook.headers });
  const rendered = route.engine.render(route.template, scope);
  const stages = interleavedBatches(
    {
      authenticate: () => route.pack.authenticate(webhook, { secret, toleranceSeconds: route.config.toleranceSeconds }),
      parse: () => route.pack.parse(webhook),
      dedupeKey: () => route.pack.dedupe(body, webhook),
      when: () => (route.condition === undefined ? true : route.engine.evaluate(route.condition, buildScope({ body, headers: webhook.headers }))),
      // Untracked, as `evaluateWebhook` renders (tracking is preview's, and costs more).
      render: () => route.engine.render(route.template, buildScope({ body, headers: webhook.headers }), { trackMissing: false }),
      recipients: () => resolveRecipients(route.recipients, scope),
      fitting: () => fitMessage(rendered.text, { policy: route.config.length, maxParts: route.config.maxParts }),
    },
    { batch, batches: Math.max(15, Math.floor(batches / 3)), warmupIterations: Math.floor(warmupIterations / 2) },
  );

  return {
    result: { medianMicros: round(main['pipeline']!, 2), floorMedianMicros: round(main['floor']!, 2), ratio: ratio(main['pipeline']!, main['floor']!) },
    details: {
      batch,
      batches,
      bodyBytes: webhook.body.byteLength,
      messages: check.messages.length,
      recipients: check.messages[0]?.to.length ?? 0,
      text: check.messages[0]?.text ?? '',
      stagesMicros: Object.fromEntries(Object.entries(stages).map(([name, value]) => [name, round(value, 2)])),
    },
  };
}
