import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type PostWebhook, test, webhookPoster } from '../helpers/fixtures';
import type { PayloadsAnswer, RecordsPage } from '../../local/console/contract';
import { shownNumbers, trelloRouteYaml } from '../helpers/shown-numbers';
import {
  cleanEnv,
  consoleSession,
  eventually,
  readJsonFile,
  startRelay,
  stopRelay,
  type RelayProcess,
} from './support';

/**
 * Masking through `npm start`: real signed webhooks carrying numbers in the spellings the
 * relay accepts and credentials in headers of any name; nothing the running relay's console
 * answers shows one of those numbers in full or a credential.
 */

const LOCAL_CONFIG = new URL('../../config/local.yaml', import.meta.url).pathname;
const TRELLO_ROUTE = trelloRouteYaml({
  recipients: ['712 345 621', '+255 (0) 712 345 622'],
  template: '{{ action.data.text }}',
});
const NUMBERS = ['712345621', '712345622', '712345623', '712345624', '712345625', '712345626', '712345627'];
const HUNTER = `hunter2-${randomBytes(8).toString('hex')}`;

let dir: string;
let relay: RelayProcess;
let poster: PostWebhook | undefined;
let secrets: Record<string, string>;
/** Signed in once: the banner's link works once. */
let session: Record<string, string> | undefined;

test.beforeAll(async ({ fileDir }) => {
  dir = fileDir;
  const config = join(dir, 'relay.yaml');
  writeFileSync(config, `${readFileSync(LOCAL_CONFIG, 'utf8').trimEnd()}\n${TRELLO_ROUTE}`);
  relay = await startRelay(
    cleanEnv({
      PORT: '0',
      RELAY_CONFIG: config,
      RELAY_DATA_DIR: join(dir, 'data'),
      RELAY_SECRETS_FILE: join(dir, 'secrets.json'),
    }),
  );
  secrets = readJsonFile<Record<string, string>>(join(dir, 'secrets.json'));
}, 120_000);

afterAll(async () => {
  if (relay !== undefined) await stopRelay(relay);
});

/** Posts `body` signed as the route's source signs; `headers` (a credential in a header of any name) go with it. */
async function deliver(
  route: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ ids: string[]; sent: Readonly<Record<string, string>> }> {
  poster ??= webhookPoster({ url: relay.url, configPath: join(dir, 'relay.yaml'), secrets });
  const answer = await poster(route, Buffer.from(body), { headers });
  expect(answer.status).toBe(202);
  return { ids: answer.body['ids'] as string[], sent: answer.sent };
}

/** The console as the page uses it: signed in through the banner's link; GETs, and POSTs with the anti-forgery header. */
async function consoleCall(method: 'GET' | 'POST', path: string, body?: unknown): Promise<string> {
  session ??= await consoleSession(relay);
  const headers: Record<string, string> = { accept: 'application/json', ...session };
  if (method !== 'POST') delete headers['content-type'];
  const response = await fetch(`${relay.url}/console/api${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(response.status, `${method} ${path}`).toBe(200);
  return await response.text();
}

describe('the console of a running relay', () => {
  it('shows no number the relay accepts, in any spelling, and no credential', async () => {
    const notify = await deliver(
      'notify',
      '{"message":"call 712 345 623 or 0712 34 56 24","phone":"\\u0030712345625","link":"?to=%2B255%20712%20345%20626"}',
      // The poster adds the route's Bearer token; a second credential rides in a header of any name.
      { 'x-webhook-auth': HUNTER },
    );
    const trello = await deliver('trello', '{"action":{"data":{"text":"ring +255 (0) 712 345 627"}}}', {
      'x-trello-delivery': '7',
      'x-webhook-auth': HUNTER,
    });
    const ids = [...notify.ids, ...trello.ids];
    await eventually(
      async () => {
        const records = (JSON.parse(await consoleCall('GET', '/records')) as RecordsPage).records;
        return ids.every((id) => records.find((record) => record.id === id)?.state === 'SENT') ? true : undefined;
      },
      { what: 'both webhooks sent' },
    );

    const answers = [await consoleCall('GET', '/overview'), await consoleCall('GET', '/records')];
    for (const id of ids) answers.push(await consoleCall('GET', `/records/${id}`));
    for (const route of ['notify', 'trello']) {
      const payloads = await consoleCall('GET', `/payloads?route=${route}`);
      answers.push(payloads);
      for (const choice of (JSON.parse(payloads) as PayloadsAnswer).payloads.filter(
        (payload) => payload.kind === 'capture',
      )) {
        answers.push(
          await consoleCall('POST', '/preview', {
            route,
            capture: choice.id,
            template: '{{ message }} {{ link }} {{ action.data.text }}',
            recipients: ['0712 34 56 21', '{{ phone }}'],
          }),
        );
      }
    }
    const all = answers.join('\n');
    expect.soft(answers.flatMap((answer) => shownNumbers(JSON.parse(answer), NUMBERS))).toEqual([]);
    for (const credential of [
      HUNTER,
      secrets['generic-token']!,
      secrets['trello-secret']!,
      trello.sent['x-trello-webhook']!,
    ])
      expect.soft(all).not.toContain(credential.slice(0, 12));
    expect(all).toContain('2557****623');
  });
});
