import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type PostWebhook, test, webhookPoster } from '../helpers/fixtures';
import type { PreviewAnswer } from '../../local/console/contract';
import {
  cleanEnv,
  consoleSession,
  eventually,
  readJsonFile,
  records,
  REPO_ROOT,
  startRelay,
  stopRelay,
  type RelayProcess,
} from './support';

/**
 * A hostile template in the console's playground, through `npm start`: the preview answers with
 * the limit it hit, and webhooks posted meanwhile are accepted and sent as usual.
 */

let dir: string;
let relay: RelayProcess;
let postWebhook: PostWebhook;

test.beforeAll(async ({ fileDir }) => {
  dir = fileDir;
  relay = await startRelay(
    cleanEnv({ PORT: '0', RELAY_DATA_DIR: join(dir, 'data'), RELAY_SECRETS_FILE: join(dir, 'secrets.json') }),
  );
  // The runtime's default config: config/local.yaml.
  postWebhook = webhookPoster({
    url: relay.url,
    configPath: join(REPO_ROOT, 'config/local.yaml'),
    secrets: readJsonFile<Record<string, string>>(join(dir, 'secrets.json')),
  });
}, 120_000);

afterAll(async () => {
  if (relay !== undefined) {
    // SIGKILL after a while: a runtime stuck in a render never gets to its SIGINT handler.
    const killer = setTimeout(() => relay.child.kill('SIGKILL'), 20_000);
    await stopRelay(relay);
    clearTimeout(killer);
  }
});

const webhook = async (n: number): Promise<{ status: number; body: Record<string, unknown> }> =>
  await postWebhook('notify', { message: `meanwhile ${n}` }, { headers: { 'idempotency-key': `meanwhile-${n}` } });

describe('a template preview that would run for minutes', () => {
  it('answers with the limit it hit, while webhooks posted meanwhile are accepted and sent', async () => {
    const headers = await consoleSession(relay);
    const preview = async (template: string, payload: unknown): Promise<PreviewAnswer> => {
      const response = await fetch(`${relay.url}/console/api/preview`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ route: 'notify', template, payload: JSON.stringify(payload) }),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as PreviewAnswer;
    };
    const items = Array.from({ length: 1_000 }, (_, index) => index);
    // The template (16 s before any limit), then a billion iterations over the payload, as
    // a page sends them while the template is typed.
    const hostile = [
      preview('{% for i in (1..30000000) %}x{% endfor %}', { phone: '0712345678' }),
      ...Array.from(
        { length: 4 },
        async () =>
          await preview(
            '{% for a in items %}{% for b in items %}{% for c in items %}{% endfor %}{% endfor %}{% endfor %}',
            { items, phone: '0712345678' },
          ),
      ),
    ];
    let previewsDone = false;
    const answered = Promise.all(hostile).finally(() => (previewsDone = true));

    // Webhooks one after another until the previews are answered (and at least five), at most 200:
    // the sandbox's 10000 TZS pay for 200 SMS with the example config's reserve left, however long a
    // busy machine takes over the previews.
    const statuses: number[] = [];
    const ids: string[] = [];
    let answeredWhilePreviewing = 0;
    for (let n = 0; (!previewsDone || n < 5) && n < 200; n += 1) {
      const { status, body } = await webhook(n);
      statuses.push(status);
      ids.push(...((body['ids'] as string[] | undefined) ?? []));
      if (!previewsDone) answeredWhilePreviewing += 1;
    }
    const [memory, ...render] = await answered;

    expect(memory).toMatchObject({ verdict: 'dropped', messages: [] });
    expect(memory!.reason).toMatch(
      /^the template cannot be rendered on this payload: memory limit exceeded: the template built more than 10000000 characters or items/,
    );
    for (const answer of render) {
      expect(answer).toMatchObject({ verdict: 'dropped', messages: [] });
      expect(answer.reason).toMatch(
        /^the template cannot be rendered on this payload: render limit exceeded: the template ran longer than 1000 ms/,
      );
    }
    expect(
      statuses.every((status) => status === 202),
      `statuses: ${statuses.join(' ')}`,
    ).toBe(true);
    expect(answeredWhilePreviewing).toBeGreaterThan(0);
    await eventually(
      async () => {
        const sent = new Set((await records(relay.url, 'route=notify&state=SENT')).map((record) => record.id));
        return ids.every((id) => sent.has(id)) ? true : undefined;
      },
      { what: `the ${ids.length} webhooks' SMS sent` },
    );
  }, 180_000);
});
