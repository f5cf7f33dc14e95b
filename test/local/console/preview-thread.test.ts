import { describe, expect, it } from 'vitest';
import { RouteSchema } from '../../../functions/core/config/schema';
import { createTemplateEngine } from '../../../functions/core/templates';
import { evaluateOffThread, type PreviewJob } from '../../../local/console/preview-thread';

const engineOptions = createTemplateEngine().options;

function job(template: string, payload: unknown): PreviewJob {
  const route = RouteSchema.parse({ source: 'generic', secret: 'token', recipients: ['0712345678'], template });
  return {
    routeId: 'r',
    route,
    engineOptions,
    defaultSenderId: undefined,
    body: Buffer.from(JSON.stringify(payload)),
    headers: { 'content-type': 'application/json' },
  };
}

const items = Array.from({ length: 1_000 }, (_, index) => index);
const BILLION_STEPS =
  '{% for a in items %}{% for b in items %}{% for c in items %}{% endfor %}{% endfor %}{% endfor %}';

describe('evaluateOffThread', () => {
  it('evaluates a preview in the worker exactly as ingest would', async () => {
    const result = await evaluateOffThread(job('Hi {{ name }}{{ nothing }}', { name: 'Asha' }));
    expect(result).toMatchObject({
      verdict: 'send',
      messages: [{ to: ['255712345678'], text: 'Hi Asha', segments: 1 }],
      warnings: ['template variable "nothing" is missing from the payload'],
    });
  }, 90_000);

  it('answers a render stopped by its limit with the reason', async () => {
    const result = await evaluateOffThread(job(BILLION_STEPS, { items }));
    expect(result.verdict).toBe('dropped');
    expect(result.reason).toMatch(/^the template cannot be rendered on this payload: render limit exceeded/);
  }, 90_000);

  it('stops a preview past its time by ending the worker, and the next one gets a new worker', async () => {
    // The render limit (1 s) is beyond this time-out: only ending the worker can stop it in time.
    const stopped = await evaluateOffThread(job(BILLION_STEPS, { items }), { timeoutMs: 100 });
    expect(stopped).toEqual({
      verdict: 'dropped',
      reason: 'the preview ran longer than 100 ms and was stopped',
      dedupeKey: null,
      messages: [],
      dropped: [],
      warnings: [],
    });
    const next = await evaluateOffThread(job('again', {}));
    expect(next).toMatchObject({ verdict: 'send', messages: [{ text: 'again' }] });
  }, 90_000);

  it('runs previews one at a time, each answered with its own result', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, async (_, index) => await evaluateOffThread(job(`n{{ n }}`, { n: index }))),
    );
    expect(results.map((result) => result.messages[0]?.text)).toEqual(['n0', 'n1', 'n2', 'n3', 'n4', 'n5']);
  }, 90_000);
});
