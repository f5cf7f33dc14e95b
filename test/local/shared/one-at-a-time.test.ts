import { describe, expect, it } from 'vitest';
import type { DynaliteHandler, SdkHttpRequest, SdkHttpResponse } from '../../../local/shared/dynalite-handler';
import { oneAtATime } from '../../../local/shared/one-at-a-time';

/** A handler whose requests wait until the test answers them, in any order it likes. */
function heldHandler() {
  const held: { readonly path: string; answer(): void; fail(): void }[] = [];
  const response: SdkHttpResponse = { statusCode: 200, headers: {}, body: new Uint8Array() };
  const handler: DynaliteHandler = {
    handle: (request) =>
      new Promise((resolve, reject) => {
        held.push({
          path: request.path,
          answer: () => resolve({ response }),
          fail: () => reject(new Error(`${request.path} failed`)),
        });
      }),
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
    destroy: () => {
      throw new Error('the shared handler must not be destroyed by the background client');
    },
  };
  return { handler, held };
}

const request = (path: string): SdkHttpRequest => ({ method: 'POST', path, headers: {} });
/** Lets the handed-on requests reach the inner handler. */
const settle = async (): Promise<void> => {
  for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
};

describe('oneAtATime', () => {
  it('hands on one request at a time, in the order they came, the next once the last is answered', async () => {
    const { handler, held } = heldHandler();
    const gated = oneAtATime(handler);
    const answers = ['/a', '/b', '/c'].map((path) => gated.handle(request(path)));
    await settle();
    expect(held.map((entry) => entry.path)).toEqual(['/a']);
    held[0]!.answer();
    await answers[0];
    await settle();
    expect(held.map((entry) => entry.path)).toEqual(['/a', '/b']);
    held[1]!.answer();
    await settle();
    expect(held.map((entry) => entry.path)).toEqual(['/a', '/b', '/c']);
    held[2]!.answer();
    await expect(Promise.all(answers)).resolves.toHaveLength(3);
  });

  it('goes on with the next request after one fails, and the failure reaches its own caller only', async () => {
    const { handler, held } = heldHandler();
    const gated = oneAtATime(handler);
    const first = gated.handle(request('/a'));
    const second = gated.handle(request('/b'));
    await settle();
    held[0]!.fail();
    await expect(first).rejects.toThrow('/a failed');
    await settle();
    expect(held.map((entry) => entry.path)).toEqual(['/a', '/b']);
    held[1]!.answer();
    await expect(second).resolves.toMatchObject({ response: { statusCode: 200 } });
  });

  it('leaves the handler it wraps to its owner when destroyed', () => {
    const { handler } = heldHandler();
    expect(() => oneAtATime(handler).destroy()).not.toThrow();
  });
});
