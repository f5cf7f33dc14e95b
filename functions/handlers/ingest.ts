import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { answerAckLink, answerWebhook, isAckPath } from '../relay/edge';
import { ingestWebhook, type IngestAnswer, type IngestRequest } from '../relay/ingest';
import { answerOpsgenieApi } from '../relay/opsgenie-api';
import { ingestContext } from './wiring/compiled';
import { type LambdaRelay, observability, prepareOnLambda } from './wiring/context';
import { invoke } from './wiring/invoke';

// On Lambda the templates are compiled during init too, not by the first webhook.
await prepareOnLambda(ingestContext);

/**
 * The webhook endpoint, `POST /hooks/{route}` (and the route's API below it, `ANY
 * /hooks/{route}/{proxy+}`) on an API Gateway HTTP API (payload format 2.0): a
 * translation of the event to and from `answerWebhook` (functions/relay/edge.ts), which answers
 * only after the webhook's messages are recorded and 503 when anything fails before that.
 *
 * @example
 * ```ts
 * const response = await handler(event); // { statusCode: 202, headers: { 'content-type': 'application/json' }, body: '{"status":"accepted","ids":["01J…"]}' }
 * ```
 */
export async function handler(
  event: APIGatewayProxyEventV2,
  lambdaContext?: Context,
): Promise<APIGatewayProxyStructuredResultV2> {
  const body = Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8');
  const timeEpoch = event.requestContext?.timeEpoch;
  // Payload format 2.0 moves cookies out of the headers.
  const cookies =
    event.cookies !== undefined && event.cookies.length > 0 ? [['cookie', event.cookies.join('; ')] as const] : [];
  const query =
    event.rawQueryString ??
    new URLSearchParams(
      Object.entries(event.queryStringParameters ?? {}).filter(
        (pair): pair is [string, string] => pair[1] !== undefined,
      ),
    ).toString();
  const request = {
    method: event.requestContext?.http?.method ?? 'POST',
    path: event.rawPath ?? '/hooks',
    headers: [
      ...Object.entries(event.headers ?? {}).filter((pair): pair is [string, string] => pair[1] !== undefined),
      ...cookies,
    ],
    query,
    body: async () => new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
    receivedAt: typeof timeEpoch === 'number' && Number.isFinite(timeEpoch) ? new Date(timeEpoch) : new Date(),
  };
  if (isAckPath(request.path)) {
    // The acknowledge link (paging): an HTML page, GET shows, POST acknowledges.
    const page = await invoke(lambdaContext, async (relay) => {
      const context = ingestContext(relay);
      return await answerAckLink(request, context.store, context.config);
    });
    return { statusCode: page.status, headers: page.headers, body: page.html };
  }
  // The path and method are checked before the wiring is built; a throw while building it is a 503 too.
  // The API's own URL: the acknowledge link's origin for a route whose ack names no baseUrl.
  const domain = event.requestContext?.domainName;
  const publicUrl = domain === undefined || domain === '' ? {} : { publicUrl: `https://${domain}` };
  const ingestWith =
    (relay: LambdaRelay) =>
    async (webhook: IngestRequest): Promise<IngestAnswer> =>
      await ingestWebhook({ ...ingestContext(relay), ...publicUrl }, webhook, { maxBodyBytes: relay.env.maxBodyBytes });
  const response = await answerWebhook(
    request,
    async (webhook) => await invoke(lambdaContext, async (relay) => await ingestWith(relay)(webhook)),
    {
      onError: (route, error) => observability().logger.error('webhook not recorded', { route, error }),
      // Paths below a route's URL: Opsgenie's alert API on an opsgenie route. One invocation for the
      // request, its create included (the edge's ingest would be an invocation of its own).
      api: async (call) =>
        await invoke(
          lambdaContext,
          async (relay) => await answerOpsgenieApi({ ...ingestContext(relay), ...publicUrl }, call, ingestWith(relay)),
        ),
    },
  );
  return {
    statusCode: response.status,
    headers: { 'content-type': 'application/json', ...response.headers },
    body: JSON.stringify(response.body),
  };
}
