import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { test } from '../../helpers/fixtures';
import { loadConfigFile, type LoadedConfig } from '../../../functions/core/config/load';
import { normalizeMsisdn } from '../../../functions/core/recipients';
import { ingestWebhook } from '../../../functions/relay/ingest';
import type { RelayContext } from '../../../functions/relay/ports';
import { sendMessage } from '../../../functions/relay/sender';
import { type ConsoleApi, createStoreApi } from '../../../local/console/api';
import type { PayloadsAnswer, PreviewAnswer, RecordsPage } from '../../../local/console/contract';
import { FIXTURES_DIR, rawRoutesOf } from '../../../local/console/standalone';
import { openLocalStore, type LocalStore } from '../../../local/shared/local-store';
import { createLocalContext } from '../../../local/runtime/runtime';
import { ensureSecretsFile } from '../../../local/runtime/secrets';
import { resolveRuntimeSettings } from '../../../local/shared/settings';
import { signWebhook } from '../../../local/runtime/signers';
import { startSandbox } from '../../../local/sandbox/server';
import type { RunningSandbox } from '../../../local/sandbox/types';
import { shownNumbers, trelloRouteYaml } from '../../helpers/shown-numbers';

// Whatever the console answers (record, captures, payload picker, preview output
// and YAML, overview) shows no number the relay would accept, in any spelling, and no credential.
// The API is called as the console's HTTP layer calls it: its answer is the JSON the page gets.

const LOCAL_CONFIG = new URL('../../../config/local.yaml', import.meta.url).pathname;

const TRELLO_ROUTE = trelloRouteYaml({
  recipients: ['712 345 611', '0712 34 56 12', '+255 (0) 712 345 613'],
  template: '{{ action.data.text }} (office 0712 345 620)',
  when: "action.data.text != '712 345 620'",
});

/** Every number this test sends, by its nine national digits: none may appear in full. */
const NUMBERS = Array.from({ length: 20 }, (_, index) => `7123456${String(index + 1).padStart(2, '0')}`);
const HUNTER = `hunter2-${randomBytes(8).toString('hex')}`;

let dir: string;
let local: LocalStore;
let sandbox: RunningSandbox;
let context: RelayContext;
let loaded: LoadedConfig;
let api: ConsoleApi;
let secrets: Record<string, string>;
const credentials: string[] = [HUNTER];

test.beforeAll(async ({ fileDir }) => {
  dir = fileDir;
  const configPath = join(dir, 'relay.yaml');
  const configText = `${readFileSync(LOCAL_CONFIG, 'utf8').trimEnd()}\n${TRELLO_ROUTE}`;
  writeFileSync(configPath, configText);
  const settings = resolveRuntimeSettings(
    { config: configPath, secrets: join(dir, 'secrets.json'), dataDir: join(dir, 'data') },
    {},
  );
  loaded = loadConfigFile(configPath);
  secrets = ensureSecretsFile(settings.secretsPath, loaded).values;
  credentials.push(secrets['generic-token']!, secrets['trello-secret']!);
  local = await openLocalStore({ dataDir: settings.dataDir, tableName: settings.tableName });
  sandbox = await startSandbox({
    apiKey: secrets['providerApiKey']!,
    senderIds: ['SMSRELAY', 'ALERTS', 'DUKA'],
    defaultSenderId: 'SMSRELAY',
    balance: 100_000,
    rate: 20,
  });
  const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  context = createLocalContext({
    loaded,
    store: local.store,
    secretsPath: settings.secretsPath,
    providerBaseUrl: sandbox.baseUrl,
    providerApiKey: secrets['providerApiKey']!,
    logger: silent,
    policy: settings.policy,
  });
  api = createStoreApi({
    description: 'test store',
    environment: 'local',
    loaded,
    rawRoutes: rawRoutesOf(configText),
    webhookBase: 'http://127.0.0.1:3000',
    fixturesDir: FIXTURES_DIR,
    withStore: async (use) => await use(local.store),
  });
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
  await local?.close();
});

/** Posts a body signed as the route's source would, through the relay's ingest, and sends what it accepted. */
async function deliver(
  routeId: string,
  body: string,
  extra: Record<string, string>,
): Promise<{ ids: string[]; headers: Record<string, string> }> {
  const route = loaded.routes.get(routeId)!;
  const bytes = Buffer.from(body, 'utf8');
  const signed = signWebhook(route.pack.name, {
    body: bytes,
    secret: secrets[route.config.secret]!,
    headers: { 'content-type': 'application/json', ...extra },
    route: route.config,
  });
  const headers = Object.fromEntries(Object.entries(signed).map(([name, value]) => [name.toLowerCase(), value]));
  const answer = await ingestWebhook(context, { routeId, body: bytes, headers, query: {}, receivedAt: new Date() });
  expect(answer.status).toBe(202);
  const ids = answer.body['ids'] as string[];
  for (const id of ids) await sendMessage(context, id);
  return { ids, headers };
}

async function call(
  method: string,
  path: string,
  { query = '', body }: { query?: string; body?: unknown } = {},
): Promise<unknown> {
  const answer = await api({ method, path, query: new URLSearchParams(query), body });
  expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(200);
  // What the page receives: the answer as JSON.
  return JSON.parse(JSON.stringify(answer.body)) as unknown;
}

function shownCredentials(answer: unknown, extra: readonly string[] = []): string[] {
  const json = JSON.stringify(answer);
  return [...credentials, ...extra].filter((credential) => json.includes(credential));
}

describe('the console never shows a number the relay accepts, nor a credential', () => {
  it('uses numbers the relay itself accepts', () => {
    for (const spelling of ['712 345 601', '0712 34 56 02', '+255 (0) 712 345 603', '0712/345/607'])
      expect(normalizeMsisdn(spelling).ok, spelling).toBe(true);
    for (const number of NUMBERS) expect(normalizeMsisdn(number).ok, number).toBe(true);
  });

  it('in records, captures, the payload picker, the preview and its YAML, and the overview', async () => {
    // The raw JSON carries an escaped digit and escaped slashes, as a sender's encoder may write them.
    const notifyBody =
      '{"message":"call 712 345 601 or 0712 34 56 02 or +255 (0) 712 345 603",' +
      '"phone":"\\u0030712345604",' +
      '"link":"https://x.example/?to=%2B255%20712%20345%20605&alt=0712+345+606",' +
      '"note":"line\\n0712\\/345\\/607"}';
    const notify = await deliver('notify', notifyBody, {
      authorization: `Bearer ${secrets['generic-token']}`,
      'x-webhook-auth': HUNTER,
      'user-agent': 'Hook/1.0 (+255 712 345 608)',
      'x-caller': '0712 345 609',
    });
    const trelloBody = '{"action":{"data":{"text":"ring 0712 34 56 14 or %2B255%20712%20345%20615"}}}';
    const trello = await deliver('trello', trelloBody, { 'x-trello-delivery': '101', 'x-webhook-auth': HUNTER });
    credentials.push(trello.headers['x-trello-webhook']!);
    expect(trello.headers['x-trello-webhook']).toMatch(/^[A-Za-z0-9+/]{27}=$/);

    // A body that is not UTF-8 (Latin-1 text) is kept as base64: its text is shown masked too.
    const [record] = notify.ids;
    const created = (await local.store.getMessage(record!))!.createdAt;
    const latin1 = Buffer.concat([
      Buffer.from('{"message":"caf', 'latin1'),
      Buffer.from([0xe9]),
      Buffer.from(' 0712 34 56 18"}', 'latin1'),
    ]);
    await local.store.capturePayload({
      route: 'notify',
      receivedAt: new Date(Date.parse(created) - 1_000),
      headers: { 'content-type': 'text/plain' },
      keepHeaders: [],
      body: latin1,
      recordIds: [record!],
      keepSeconds: 3_600,
    });

    const answers: Record<string, unknown> = {};
    answers['overview'] = await call('GET', '/overview');
    for (const route of ['notify', 'trello']) {
      const page = (await call('GET', '/records', { query: `route=${route}` })) as RecordsPage;
      answers[`records ${route}`] = page;
      for (const row of page.records) answers[`record ${row.id}`] = await call('GET', `/records/${row.id}`);
      const payloads = (await call('GET', '/payloads', { query: `route=${route}` })) as PayloadsAnswer;
      answers[`payloads ${route}`] = payloads;
      for (const payload of payloads.payloads.filter((choice) => choice.kind === 'capture')) {
        answers[`preview ${route} ${payload.id}`] = await call('POST', '/preview', {
          body: { route, capture: payload.id },
        });
        answers[`preview ${route} ${payload.id} edited`] = await call('POST', '/preview', {
          body: {
            route,
            capture: payload.id,
            template: '{{ message }} {{ action.data.text }} {{ link }}',
            recipients: ['0712 34 56 16', '+255 (0) 712 345 617', '{{ phone }}'],
          },
        });
      }
    }
    // The playground starts from the overview's (masked) template and condition: sent back
    // unchanged, they are the route's own, so the preview is the real one, on the capture as the
    // page shows it: each masked number a stand-in made of the shown digits (`2557****614` →
    // `255711111614`), the route's own number the config's.
    const trelloSettings = (
      answers['overview'] as { routes: { id: string; template: string; when: string }[] }
    ).routes.find((route) => route.id === 'trello')!;
    expect.soft(trelloSettings.template).toBe('{{ action.data.text }} (office 2557****620)');
    const trelloCapture = (answers['payloads trello'] as PayloadsAnswer).payloads.find(
      (choice) => choice.kind === 'capture',
    )!;
    const asStarted = (await call('POST', '/preview', {
      body: {
        route: 'trello',
        capture: trelloCapture.id,
        template: trelloSettings.template,
        when: trelloSettings.when,
      },
    })) as PreviewAnswer;
    answers['preview trello as the page starts'] = asStarted;
    expect.soft(asStarted).toMatchObject({
      verdict: 'send',
      messages: [
        {
          to: ['2557****611', '2557****612', '2557****613'],
          text: 'ring 2557****614 or 2557****615 (office 2557****620)',
          characters: 'ring 255711111614 or 255711111615 (office 0712 345 620)'.length,
        },
      ],
    });
    answers['preview pasted'] = await call('POST', '/preview', {
      body: { route: 'notify', payload: '{"message":"to 712 345 619","phone":"0712 34 56 19"}' },
    });

    // The answers did show these things, masked: the test looks where the numbers are.
    const detail = answers[`record ${record}`] as {
      sms: { text: string };
      capture: { headers: Record<string, string>; body: string; bodyEncoding: string };
    };
    expect.soft(detail.sms.text).toContain('2557****601');
    expect.soft(detail.capture.bodyEncoding).toBe('base64');
    const trelloPayloads = (answers['payloads trello'] as PayloadsAnswer).payloads.filter(
      (choice) => choice.kind === 'capture',
    );
    expect.soft(trelloPayloads).toHaveLength(1);
    expect.soft(Object.keys(trelloPayloads[0]?.headers ?? {}).sort()).toEqual(['content-type', 'x-trello-delivery']);
    const notifyCaptures = (answers['payloads notify'] as PayloadsAnswer).payloads.filter(
      (choice) => choice.kind === 'capture',
    );
    expect
      .soft(notifyCaptures.find((choice) => choice.body.includes('call'))?.headers)
      .toEqual({ 'content-type': 'application/json', 'user-agent': 'Hook/1.0 (2557****608)' });
    expect.soft(JSON.stringify(answers['overview'])).toContain('2557****611');

    const leaks = Object.fromEntries(
      Object.entries(answers)
        .map(
          ([name, answer]) =>
            [
              name,
              [
                ...shownNumbers(answer, NUMBERS),
                ...shownCredentials(answer).map((credential) => `credential ${credential.slice(0, 6)}…`),
              ],
            ] as const,
        )
        .filter(([, found]) => found.length > 0),
    );
    expect.soft(leaks).toEqual({});
    // Every capture shown (record detail, payload picker) keeps only allowed headers.
    const shownHeaders = Object.values(answers).flatMap((answer) => {
      const { capture, payloads } = answer as {
        capture?: { headers: Record<string, string> } | null;
        payloads?: PayloadsAnswer['payloads'];
      };
      return [
        ...(capture ? [capture.headers] : []),
        ...(payloads ?? []).filter((choice) => choice.kind === 'capture').map((choice) => choice.headers),
      ];
    });
    expect(shownHeaders.length).toBeGreaterThanOrEqual(5);
    expect
      .soft(
        shownHeaders
          .flatMap(Object.keys)
          .filter((name) => !['content-type', 'user-agent', 'x-trello-delivery'].includes(name)),
      )
      .toEqual([]);
  });
});

describe("the template playground's preview of a captured payload", () => {
  // A capture once was evaluated on its body as received and only the output masked,
  // so a template that printed a number next to a letter, or reversed, showed it in full.
  it('renders on the masked body: no template prints a captured number, whole, joined to a letter or reversed', async () => {
    const captured = '0765432198';
    const reversed = [...captured].reverse().join('');
    await deliver('notify', JSON.stringify({ message: 'order 51 shipped', customer: { phone: captured } }), {
      authorization: `Bearer ${secrets['generic-token']}`,
    });
    const payloads = (await call('GET', '/payloads', { query: 'route=notify' })) as PayloadsAnswer;
    const capture = payloads.payloads.find((choice) => choice.kind === 'capture' && choice.body.includes('order 51'))!;
    expect(capture.body).toContain('2557****198');

    const templates = [
      '{{ customer.phone }}',
      '{{ customer.phone }}x',
      'x{{ customer.phone }}',
      "{{ customer.phone | split: '' | reverse | join: '' }}",
      "{{ customer.phone | split: '' | join: '-' }}",
      "{{ customer.phone | remove: '0' }}",
    ];
    const answers: Record<string, PreviewAnswer> = {};
    for (const template of templates) {
      answers[template] = (await call('POST', '/preview', {
        body: { route: 'notify', capture: capture.id, template, recipients: ['{{ customer.phone }}', '0712345678'] },
      })) as PreviewAnswer;
    }
    // The previews did render the field: masked, as the page shows it.
    expect(answers['{{ customer.phone }}x']!.messages[0]).toMatchObject({
      text: '2557****198x',
      to: ['2557****198', '2557****678'],
    });
    const shown = Object.entries(answers).filter(([, answer]) => {
      const digits = JSON.stringify(answer).replace(/\D/g, '');
      return ['765432198', '76543219', reversed.slice(0, 8), '7654321'].some((run) => digits.includes(run));
    });
    expect(shown.map(([template]) => template)).toEqual([]);
  });

  it("counts the config's recipient once when the captured payload names the same number", async () => {
    await deliver('notify', JSON.stringify({ message: 'order 52 shipped', customer: { phone: '0712345678' } }), {
      authorization: `Bearer ${secrets['generic-token']}`,
    });
    const payloads = (await call('GET', '/payloads', { query: 'route=notify' })) as PayloadsAnswer;
    const capture = payloads.payloads.find((choice) => choice.kind === 'capture' && choice.body.includes('order 52'))!;
    const preview = (await call('POST', '/preview', {
      body: { route: 'notify', capture: capture.id, recipients: ['{{ customer.phone }}', '0712345678'] },
    })) as PreviewAnswer;
    const [sms] = preview.messages;
    expect(sms?.to).toEqual(['2557****678']);
    expect(sms?.estimatedCost).not.toBeNull();
    expect(sms?.estimatedCost).toBe(sms!.segments * 20);
  });
});
