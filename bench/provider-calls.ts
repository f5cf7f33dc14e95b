/**
 * `providerCalls`: how many calls the relay makes to the SMS service for the fixed webhook mix of
 * `webhookMix()` (harness.ts), against the optimum: one call per SMS part with all of its
 * recipients in it; duplicates and filtered webhooks none.
 *
 * The mix goes through the real handlers, as on AWS: each webhook as an API Gateway event into the
 * ingest handler, then the message records the stream would deliver (INSERTs of PENDING records,
 * read back from the table) into the sender handler, in batches of 10 (the event source's
 * `batchSize`). The sandbox SMS service counts the `POST /v1/sms/send` requests it received.
 */
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../functions/core/config/load';
import { evaluateWebhook } from '../functions/core/pipeline/evaluate';
import {
  apiGatewayEvent,
  BENCH_CONFIG_YAML,
  createTable,
  handlerModules,
  lambdaContext,
  pendingMessages,
  relayEnv,
  scanTable,
  SECRETS,
  streamBatches,
  tapOutput,
  useRelayEnv,
  webhookMix,
  type Services,
  type TapReading,
  type Workspace,
} from './harness';

export interface ProviderCallsResult {
  readonly observed: number;
  readonly optimal: number;
}

export interface ProviderCallsDetails {
  readonly webhooks: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly pendingRecords: number;
  readonly senderInvocations: number;
  /** Messages the sandbox delivered, distinct texts among them, and recipients in total. */
  readonly deliveredMessages: number;
  readonly distinctTexts: number;
  readonly recipientDeliveries: number;
  /** Optimal calls per kind of webhook in the mix. */
  readonly optimalByKind: Readonly<Record<string, number>>;
}

/** One invocation's measurements. */
export interface InvocationSample {
  readonly ms: number;
  readonly cpuMs: number;
  readonly log: TapReading;
}

export interface MixRun {
  readonly statuses: Readonly<Record<string, number>>;
  readonly ingest: readonly InvocationSample[];
  readonly sender: readonly InvocationSample[];
  readonly pendingRecords: number;
  readonly optimalCalls: number;
  readonly webhooks: number;
}

export interface MixOptions {
  readonly services: Services;
  readonly tableName: string;
  /** Makes the mix's webhooks unique within the table. */
  readonly tag: string;
  /** Stream records per sender invocation. @default 10 (the event source's batchSize) */
  readonly senderBatchSize?: number;
  /** Called before the ingest and the sender phase (the DynamoDB meter's phases). */
  readonly onPhase?: (phase: 'ingest' | 'sender') => void;
  readonly memoryMb?: { readonly ingest: number; readonly sender: number };
}

const cpuMs = (start: NodeJS.CpuUsage): number => {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
};

/**
 * Sends the mix through the ingest handler (one webhook at a time), then the resulting PENDING
 * records through the sender handler; measures each invocation's wall time, CPU time and log
 * output. The handlers' environment must already be set (`useRelayEnv`).
 */
export async function runMix({ services, tableName, tag, senderBatchSize = 10, onPhase, memoryMb = { ingest: 256, sender: 256 } }: MixOptions): Promise<MixRun> {
  const { ingest, sender } = await handlerModules();
  const mix = webhookMix(tag);
  const statuses: Record<string, number> = {};
  const ingestSamples: InvocationSample[] = [];
  const senderSamples: InvocationSample[] = [];
  const tap = tapOutput();
  try {
    onPhase?.('ingest');
    for (const webhook of mix.requests) {
      const event = apiGatewayEvent(webhook);
      const context = lambdaContext('ingest', memoryMb.ingest, 10_000);
      tap.reset();
      const cpu = process.cpuUsage();
      const start = performance.now();
      const response = await ingest.handler(event, context);
      const ms = performance.now() - start;
      ingestSamples.push({ ms, cpuMs: cpuMs(cpu), log: tap.read() });
      statuses[String(response.statusCode)] = (statuses[String(response.statusCode)] ?? 0) + 1;
    }

    const pending = pendingMessages(await scanTable(services.dynamoEndpoint, tableName));
    onPhase?.('sender');
    for (const event of streamBatches(pending, senderBatchSize)) {
      const context = lambdaContext('sender', memoryMb.sender, 60_000);
      tap.reset();
      const cpu = process.cpuUsage();
      const start = performance.now();
      const response = await sender.handler(event, context);
      const ms = performance.now() - start;
      senderSamples.push({ ms, cpuMs: cpuMs(cpu), log: tap.read() });
      if (response.batchItemFailures.length > 0) throw new Error(`sender reported failures: ${JSON.stringify(response.batchItemFailures)}`);
    }
    return { statuses, ingest: ingestSamples, sender: senderSamples, pendingRecords: pending.length, optimalCalls: mix.optimalCalls, webhooks: mix.requests.length };
  } finally {
    tap.restore();
  }
}

/**
 * Checks the mix against the relay's own evaluation: every webhook that is not a repeat plans as
 * many SMS parts as the mix says (so a template or fitting change cannot silently move the optimum).
 */
export function checkMixParts(tag: string): void {
  const { routes } = loadConfig(BENCH_CONFIG_YAML, 'bench config');
  const mix = webhookMix(tag);
  const seen = new Set<string>();
  mix.requests.forEach((request, index) => {
    const identity = `${request.route}\n${request.body}`;
    const repeat = seen.has(identity);
    seen.add(identity);
    if (repeat) return;
    const route = routes.get(request.route);
    if (route === undefined) throw new Error(`mix webhook ${index}: no route ${request.route}`);
    const secret = SECRETS[route.config.secret as keyof typeof SECRETS];
    const evaluation = evaluateWebhook(route, { body: new TextEncoder().encode(request.body), headers: request.headers, query: {}, receivedAt: new Date() }, { secret });
    if (evaluation.messages.length !== mix.parts[index]) {
      throw new Error(`mix webhook ${index} (${request.route}) plans ${evaluation.messages.length} SMS parts, the mix says ${mix.parts[index]} (${evaluation.verdict})`);
    }
  });
}

export async function runProviderCalls({ services, workspace }: { readonly services: Services; readonly workspace: Workspace }): Promise<{ result: ProviderCallsResult; details: ProviderCallsDetails }> {
  checkMixParts('calls');
  const tableName = 'provider-calls';
  await createTable(services.dynamoEndpoint, tableName);
  await useRelayEnv(relayEnv({ workspace, services, tableName }));
  await services.clearSandbox();

  const run = await runMix({ services, tableName, tag: 'calls' });
  const observed = await services.sendRequests();
  const messages = await services.sandboxMessages();
  const mix = webhookMix('calls');
  const kinds = ['alertmanager firing', 'shopify orders', 'split into 2 parts', 'duplicates', 'filtered (resolved)'];
  const optimalByKind = Object.fromEntries(kinds.map((kind, index) => [kind, mix.parts.slice(index === 0 ? 0 : [20, 30, 35, 40][index - 1], [20, 30, 35, 40, 45][index]).reduce((sum, value) => sum + value, 0)]));

  return {
    result: { observed, optimal: run.optimalCalls },
    details: {
      webhooks: run.webhooks,
      statuses: run.statuses,
      pendingRecords: run.pendingRecords,
      senderInvocations: run.sender.length,
      deliveredMessages: messages.length,
      distinctTexts: new Set(messages.map((message) => message.message)).size,
      recipientDeliveries: messages.reduce((sum, message) => sum + message.phoneNumbers.length, 0),
      optimalByKind,
    },
  };
}
