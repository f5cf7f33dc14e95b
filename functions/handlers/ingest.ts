import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { ingestWebhook, type IngestRequest } from '../relay/ingest';
import { ingestContext } from './wiring/compiled';
import { observability, prepareOnLambda } from './wiring/context';
import { invoke } from './wiring/invoke';

// On Lambda the templates are compiled during init too, not by the first webhook.
await prepareOnLambda(ingestContext);

/**
 * The webhook endpoint, `POST /hooks/{route}` on an API Gateway HTTP API (payload format 2.0).
 * Answers only after the webhook's messages are recorded: 202 accepted, 200 duplicate / filtered /
 * ping, 4xx for what the sender must fix. When anything fails before the record is complete (the
 * store is unreachable, the secret cannot be read), the answer is 503: the sender retries, and the
 * store's dedupe guard makes the retry record the webhook exactly once, completing an accept that
 * stopped half-way. The details go to the log, never into the response.
 *
 * @example
 * ```ts
 * const response = await handler(event); // { statusCode: 202, headers: { 'content-type': 'application/json' }, body: '{"status":"accepted","ids":["01J…"]}' }
 * ```
 */
export async function handler(event: APIGatewayProxyEventV2, lambdaContext?: Context): Promise<APIGatewayProxyStructuredResultV2> {
  const method = event.requestContext?.http?.method?.toUpperCase();
  if (method !== undefined && method !== 'POST') return json(405, { error: 'only POST is accepted' }, { allow: 'POST' });
  const routeId = event.pathParameters?.['route'];
  if (routeId === undefined || routeId === '') return json(404, { error: 'no route in the path; POST to /hooks/<route>' });

  try {
    return await invoke(lambdaContext, async (relay) => {
      const { status, body } = await ingestWebhook(ingestContext(relay), webhookOf(event, routeId), { maxBodyBytes: relay.env.maxBodyBytes });
      return json(status, body);
    });
  } catch (error) {
    observability().logger.error('webhook not recorded', { route: routeId, error });
    return json(503, { error: 'the relay could not record this webhook; please retry' });
  }
}

/**
 * The webhook as the relay sees it: the exact body bytes (base64-decoded when API Gateway encoded
 * them), lower-cased headers, the first value of each query parameter, and the time API Gateway
 * received the request.
 *
 * @example
 * ```ts
 * const request = webhookOf(event, 'alerts'); // { routeId: 'alerts', body: Uint8Array, headers, query, receivedAt }
 * ```
 */
export function webhookOf(event: APIGatewayProxyEventV2, routeId: string): IngestRequest {
  const body = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64') : Buffer.from(event.body ?? '', 'utf8');
  const timeEpoch = event.requestContext?.timeEpoch;
  return {
    routeId,
    body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
    headers: headersOf(event),
    query: queryOf(event),
    receivedAt: typeof timeEpoch === 'number' && Number.isFinite(timeEpoch) ? new Date(timeEpoch) : new Date(),
  };
}

function headersOf(event: APIGatewayProxyEventV2): Record<string, string> {
  const headers: Record<string, string> = {};
  // API Gateway already lower-cases names and joins repeats with commas; a hand-made event (the
  // local runtime, a test console) may not have.
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    headers[key] = Object.hasOwn(headers, key) ? `${headers[key]}, ${value}` : value;
  }
  // Payload format 2.0 moves cookies out of the headers.
  if (event.cookies !== undefined && event.cookies.length > 0 && !Object.hasOwn(headers, 'cookie')) headers['cookie'] = event.cookies.join('; ');
  return headers;
}

function queryOf(event: APIGatewayProxyEventV2): Record<string, string> {
  // `queryStringParameters` joins a repeated parameter's values with commas, which cannot be split
  // back when a value holds a comma; the raw string gives the first value exactly.
  if (typeof event.rawQueryString === 'string') {
    const query: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(event.rawQueryString)) if (!Object.hasOwn(query, name)) query[name] = value;
    return query;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) if (value !== undefined) query[name] = value;
  return query;
}

function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}
