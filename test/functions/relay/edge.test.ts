import { describe, expect, it } from 'vitest';
import { answerWebhook, type EdgeRequest } from '../../../functions/relay/edge';
import { refused, type IngestAnswer, type IngestRequest } from '../../../functions/relay/ingest';

const accepted: IngestAnswer = {
  outcome: 'accepted',
  status: 202,
  ids: ['01J'],
  body: { status: 'accepted', ids: ['01J'] },
};

function request(overrides: Partial<EdgeRequest> = {}): EdgeRequest {
  return {
    method: 'POST',
    path: '/hooks/alerts',
    headers: [],
    query: '',
    body: async () => new Uint8Array([123, 125]),
    receivedAt: new Date(0),
    ...overrides,
  };
}

/** Runs the edge with an ingest that records what it was handed. */
async function run(edgeRequest: EdgeRequest, answer: () => Promise<IngestAnswer> = async () => accepted) {
  const seen: IngestRequest[] = [];
  const errors: [string, unknown][] = [];
  const response = await answerWebhook(
    edgeRequest,
    async (webhook) => {
      seen.push(webhook);
      return answer();
    },
    { maxBodyBytes: 64, onError: (route, error) => errors.push([route, error]) },
  );
  return { response, seen, errors };
}

describe('answerWebhook', () => {
  it('hands ingest the route, body, lower-cased headers joined by ", " and the first query value, and answers with its typed answer', async () => {
    const { response, seen } = await run(
      request({
        path: '/hooks/al%20erts',
        headers: [
          ['X-Tag', 'a'],
          ['x-tag', 'b'],
          ['Content-Type', 'application/json'],
        ],
        query: 'token=1&token=2&x=a%2Cb',
      }),
    );

    expect(seen).toEqual([
      {
        routeId: 'al erts',
        body: new Uint8Array([123, 125]),
        headers: { 'x-tag': 'a, b', 'content-type': 'application/json' },
        query: { token: '1', x: 'a,b' },
        receivedAt: new Date(0),
      },
    ]);
    expect(response).toEqual({
      status: 202,
      headers: {},
      body: { status: 'accepted', ids: ['01J'] },
      route: 'al erts',
      answer: accepted,
    });
  });

  it.each([
    ['/hooks', 'POST', 404, { error: 'no route at /hooks; post to /hooks/<route>' }, {}],
    ['/hooks/', 'POST', 404, { error: 'no route at /hooks/; post to /hooks/<route>' }, {}],
    ['/hooks/a/b', 'POST', 404, { error: 'no route at /hooks/a/b; post to /hooks/<route>' }, {}],
    ['/hooks/alerts', 'GET', 405, { error: 'method not allowed; use POST' }, { allow: 'POST' }],
  ])('answers %s %s with %i before reading the body', async (path, method, status, body, headers) => {
    let read = false;
    const { response, seen } = await run(
      request({
        path,
        method,
        body: async () => {
          read = true;
          return new Uint8Array();
        },
      }),
    );

    expect(response).toMatchObject({ status, body, headers });
    expect(read).toBe(false);
    expect(seen).toEqual([]);
  });

  it('answers 413 naming the cap when reading stopped at it', async () => {
    const { response, seen } = await run(request({ body: async () => undefined }));

    expect(response).toEqual({
      status: 413,
      headers: {},
      body: { error: 'body exceeds the limit of 64 bytes' },
      route: 'alerts',
    });
    expect(seen).toEqual([]);
  });

  it('answers a refusal with its status and JSON body', async () => {
    const { response } = await run(request(), async () => refused(401, 'unauthorized', 'missing Authorization header'));

    expect(response).toMatchObject({
      status: 401,
      body: { error: 'unauthorized', reason: 'missing Authorization header' },
      answer: { outcome: 'refused' },
    });
  });

  it('answers 503 without details when ingest throws, and reports the error', async () => {
    const failure = new Error('socket hang up talking to dynamodb');
    const { response, errors } = await run(request(), async () => await Promise.reject(failure));

    expect(response).toEqual({
      status: 503,
      headers: {},
      body: { error: 'the relay could not record this webhook; please retry' },
      route: 'alerts',
    });
    expect(errors).toEqual([['alerts', failure]]);
  });
});
