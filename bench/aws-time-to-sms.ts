/**
 * Time to SMS on AWS, on paper: the path a webhook takes from API Gateway to the SMS service's
 * request, step by step, from the stack (the stream mapping) and the code (the sender's client).
 * Nothing here is measured; the report prints it with the figures that are.
 */
import { PROVIDER_KEEP_ALIVE_MS, STREAM } from '../functions/core/defaults';

/** The round trip from the AWS region to the SMS service, assumed: see the report's text. */
export const SERVICE_RTT_MS = 160;

/** What the issue asks of the path at alert rates, cold caches excluded. */
export const AWS_TIME_TO_SMS_TARGET = { p50Ms: 500, p99Ms: 1_500 } as const;

export interface PathStep {
  readonly step: string;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly basis: string;
}

/**
 * The steps of a warm path whose sender reuses its connection. The p99 column is each step's own
 * p99, so its sum is an upper bound of the path's p99.
 */
export function awsPathSteps(): PathStep[] {
  const windowMs = STREAM.maxBatchingWindowSeconds * 1_000;
  return [
    {
      step: 'API Gateway (HTTP API) to the ingest handler',
      p50Ms: 10,
      p99Ms: 40,
      basis: 'HTTP API proxy integration of a warm function, no authorizer',
    },
    {
      step: 'ingest Lambda, warm',
      p50Ms: 15,
      p99Ms: 40,
      basis:
        "verify, match, render with the config compiled at init; the bench's `ingestWebhook` median, scaled for 256 MB (about 1/7 of a vCPU)",
    },
    {
      step: 'DynamoDB write of the accept',
      p50Ms: 10,
      p99Ms: 50,
      basis:
        'one TransactWriteItems (the guard and the message, written all or none): about the two conditional puts in sequence it replaced, a transaction taking about twice the time of one put',
    },
    {
      step: 'stream to the sender',
      p50Ms: 200 + windowMs,
      p99Ms: 600 + windowMs,
      basis: `the record reaches the stream, the event source polls the shard 4 times a second and invokes at once: batching window ${STREAM.maxBatchingWindowSeconds} s (\`STREAM.maxBatchingWindowSeconds\`)`,
    },
    {
      step: 'sender Lambda, warm, up to the request',
      p50Ms: 25,
      p99Ms: 100,
      basis: 'the claim and the checks before a send, a few DynamoDB requests in sequence',
    },
    {
      step: 'API key',
      p50Ms: 0,
      p99Ms: 0,
      basis:
        'read once per container and kept 300 s (Powertools `maxAge`); a miss, one `GetSecretValue` every 5 minutes, is a cold cache',
    },
    {
      step: 'the request to the SMS service, on the reused connection',
      p50Ms: SERVICE_RTT_MS / 2,
      p99Ms: (SERVICE_RTT_MS * 3) / 4,
      basis: `the container's client keeps its TLS connection between invocations while idle under ${PROVIDER_KEEP_ALIVE_MS / 1_000} s (\`PROVIDER_KEEP_ALIVE_MS\`): the request leaves at once and takes half a round trip`,
    },
  ];
}

/** p50 and p99 of a path: the sums of its steps (the p99 an upper bound). */
export function pathTotals(steps: readonly PathStep[]): { p50Ms: number; p99Ms: number } {
  return {
    p50Ms: steps.reduce((sum, step) => sum + step.p50Ms, 0),
    p99Ms: steps.reduce((sum, step) => sum + step.p99Ms, 0),
  };
}

const seconds = (ms: number): string => `${(ms / 1_000).toFixed(2)} s`;

/** The report's section, as Markdown lines. */
export function awsTimeToSmsSection(): string[] {
  const steps = awsPathSteps();
  const reused = pathTotals(steps);
  // A connection idle past the keep-alive limit: TCP and TLS (1.3, or 1.2 resumed from the
  // agent's session cache) cost two round trips before the request.
  const handshakeMs = 2 * SERVICE_RTT_MS;
  const before = {
    p50Ms: reused.p50Ms + 1_000 + 2.5 * SERVICE_RTT_MS,
    p99Ms: reused.p99Ms + 1_000 + 3 * SERVICE_RTT_MS,
  };
  return [
    '## Time to SMS on AWS (on paper)',
    '',
    `From API Gateway receiving a webhook to its SMS request reaching the service, one SMS at alert rates (a few a minute: stream batches hold one record), warm functions and caches. Not measured: each step is an estimate from the stack (\`infra/sms-relay.ts\`, \`STREAM\` in functions/core/defaults.ts) and the code, with the round trip to the service taken as ${SERVICE_RTT_MS} ms (an AWS region in Europe to East Africa; the issue's 0.3–0.6 s for a TCP and TLS handshake is 2–3 such round trips). The p99 column adds each step's own p99, an upper bound.`,
    '',
    '| step | p50 | p99 | basis |',
    '|---|---|---|---|',
    ...steps.map((step) => `| ${step.step} | ${step.p50Ms} ms | ${step.p99Ms} ms | ${step.basis} |`),
    `| **total** | **${seconds(reused.p50Ms)}** | **${seconds(reused.p99Ms)}** | target ${seconds(AWS_TIME_TO_SMS_TARGET.p50Ms)} / ${seconds(AWS_TIME_TO_SMS_TARGET.p99Ms)} |`,
    '',
    `- **Before** (a 1 s batching window, and the sender's clients closed at the end of every invocation): at alert rates a batch never fills, so the whole second is waited, and every invocation opened a new connection (TCP and a full TLS handshake, 2–3 round trips): about ${seconds(before.p50Ms)} p50 and ${seconds(before.p99Ms)} p99, the issue's 1.5–2 s.`,
    `- **A connection idle for more than ${PROVIDER_KEEP_ALIVE_MS / 1_000} s** (the first SMS after a quiet spell) is not reused: a new one costs two round trips more, ${handshakeMs} ms, so ${seconds(reused.p50Ms + handshakeMs)} p50 and ${seconds(reused.p99Ms + handshakeMs)} p99. The p99 target holds then too; the p50 one holds for SMS that follow another within ${PROVIDER_KEEP_ALIVE_MS / 1_000} s (an alert storm, a group of alerts) or for a service within ${Math.floor((AWS_TIME_TO_SMS_TARGET.p50Ms - reused.p50Ms + SERVICE_RTT_MS / 2) / 2.5)} ms round trip of the region.`,
    `- **Why ${PROVIDER_KEEP_ALIVE_MS / 1_000} s**: a send must never go out on a socket the service has closed meanwhile (its reset could not be told from a lost answer: "maybe sent", UNKNOWN on an at-most-once route). The service's keep-alive time-out is not documented; 5 s is the shortest common one (Node, Apache), so the client reuses a connection only while it has been idle under ${PROVIDER_KEEP_ALIVE_MS / 1_000} s, checked by the wall clock before every request (a Lambda freeze stops the agent's own idle timer, not the clock), and less when the service announces a shorter \`Keep-Alive: timeout\`.`,
    '- **Shown by tests, not timed**: the template has no `MaximumBatchingWindowInSeconds` (test/infra/stack.test.ts); the bundled sender, invoked several times in one process, sends over one connection to the sandbox (test/integration/bundled.test.ts); a warm sender reads the secret once (test/functions/handlers/sender.test.ts).',
    '',
  ];
}
