import { launchChromium } from '../helpers/chromium';
import { webhookPoster } from '../helpers/fixtures';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../local/sandbox/server';
import type { RunningSandbox } from '../../local/sandbox/types';
import { eventually, records, startRelayOn, stopRelay, type RelayOnSandbox } from '../e2e/support';

/**
 * What the console shows when SMS are not going out, in Chromium against `npm start` on loopback:
 * the browser in Europe/Berlin, the routes in Africa/Dar_es_Salaam, the SMS service at balance 0.
 */

const API_KEY = 'attention-browser-provider-key-5c2e';
/** Every page of the menu, and a record (its id filled in once one exists). */
const PAGES = ['', 'templates', 'credit', 'routes', 'oncall'] as const;
/** An ISO-8601 UTC timestamp as a machine writes it: `2026-12-05T02:52:02.967Z`. */
const ISO_Z = /\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?Z/;

let dir: string;
let sandbox: RunningSandbox;
let running: RelayOnSandbox | undefined;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let record = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sms-relay-attention-browser-'));
  sandbox = await startSandbox({ apiKey: API_KEY, balance: 0, rate: 20, senderIds: ['SMSRELAY'] });
  writeFileSync(
    join(dir, 'relay.yaml'),
    `
provider: { baseUrl: http://127.0.0.1:4010, defaultSenderId: SMSRELAY }
balance: { threshold: 100 }
routes:
  notify:
    source: generic
    secret: generic-token
    timeZone: Africa/Dar_es_Salaam
    recipients: ["0712345678"]
    template: "{{ message }}"
`,
  );
  running = await startRelayOn(dir, { providerUrl: sandbox.baseUrl, apiKey: API_KEY });
  browser = await launchChromium();
  context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (running !== undefined) await stopRelay(running.relay);
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function visit(path: string): Promise<string> {
  await page.goto(`${running!.relay.url}/console/#/${path}`);
  await page.getByTestId('nav-activity').waitFor();
  await page
    .getByText(/^(Loading…|connecting…)$/)
    .first()
    .waitFor({ state: 'detached' });
  return (await page.textContent('body')) ?? '';
}

describe('the console when SMS wait for a person', () => {
  it('says "2 SMS parked" with the balance on every page, shows no ISO-with-Z time, and the Credit card shows 0 in red', async () => {
    const { relay, secrets } = running!;
    const postWebhook = webhookPoster({ url: relay.url, configPath: join(dir, 'relay.yaml'), secrets });
    for (const message of ['Backup of db-1 failed', 'Backup of db-2 failed'])
      expect((await postWebhook('notify', { message })).status).toBe(202);
    const parked = await eventually(
      async () => {
        const found = await records(relay.url, 'state=PARKED');
        return found.length === 2 ? found : undefined;
      },
      { what: 'both SMS parked' },
    );
    record = parked[0]!.id;
    const link = /Console\s+(http:\/\/127\.0\.0\.1:\d+\/console\/\?token=[\w-]+)/.exec(relay.banner)?.[1];
    await page.goto(link!);
    await page.getByTestId('nav-activity').waitFor();

    for (const path of [...PAGES, `records/${record}`]) {
      await visit(path);
      const bar = page.getByTestId('attention-parked');
      await bar.waitFor();
      expect({ path, bar: await bar.textContent() }).toEqual({
        path,
        bar: expect.stringMatching(
          /^2 SMS parked: insufficient balance \(balance 0 TZS\), since \d\d:\d\d \(just now\)\. Top up, then Redrive 2$/,
        ),
      });
      const body = (await page.textContent('body')) ?? '';
      expect({ path, iso: ISO_Z.exec(body)?.[0] }).toEqual({ path, iso: undefined });
    }

    await visit('credit');
    const now = page.getByTestId('credit-now');
    expect(await now.textContent()).toMatch(/^0\s*TZS$/);
    expect(await now.getAttribute('class')).toContain('low');
    expect(await page.getByTestId('credit-parked').textContent()).toBe('2 SMS parked, waiting for credit');
  });

  it('fits every page in 412 px: nothing wider than the viewport', async () => {
    await page.setViewportSize({ width: 412, height: 915 });
    const widths: Record<string, unknown> = {};
    for (const path of [...PAGES, `records/${record}`]) {
      await visit(path);
      if (path === '') await page.getByTestId('activity-row').first().waitFor();
      widths[path] = await page.evaluate('document.documentElement.scrollWidth');
    }
    console.log(`scrollWidth at 412 px: ${JSON.stringify(widths)}`);
    for (const width of Object.values(widths)) expect(width).toBeLessThanOrEqual(412);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('redrives both from the bar after a top-up, and the bar goes away', async () => {
    sandbox.setBalance(10_000);
    await visit('routes');
    const button = page.getByTestId('attention-redrive');
    expect(await button.textContent()).toBe('Redrive 2');
    await button.click();
    await page.getByTestId('attention').waitFor({ state: 'detached' });
    await eventually(async () => ((await records(running!.relay.url, 'state=SENT')).length === 2 ? true : undefined), {
      what: 'both SMS sent',
    });
    expect(
      sandbox
        .messages()
        .map((sent) => sent.message)
        .sort(),
    ).toEqual(['Backup of db-1 failed', 'Backup of db-2 failed']);
    expect(await records(running!.relay.url, 'state=PARKED')).toEqual([]);
  });
});
