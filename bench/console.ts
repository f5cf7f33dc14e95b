/**
 * `consoleLoad`: how fast the web console of `npm start` answers with 10,000 records in the store.
 *
 * The records are real: the runtime (`node bin/sms-relay.mjs start`, config/local.yaml) runs as a
 * child process and receives 10,000 webhooks on several routes (notify, alerts, grafana); its sender
 * sends them to a sandbox SMS service in this process whose balance runs out near the end, so most
 * records are SENT, the last ones PARKED, and the resolved alerts DROPPED by the route's `when`.
 * Once nothing is PENDING or SENDING, each figure is the median of 5 timings after 1 warm-up: the
 * console's API, the same listing as `sms-relay logs` reads (`/_relay/records`, the baseline), and,
 * when Chromium is installed, the Activity and Credit pages from `goto` to their first content.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startSandbox } from '../local/sandbox/server';
import { PAGE_TOKEN_KEY } from '../local/console/contract';
import { openConsoleLink } from '../test/helpers/console-session';
import { operatorHeaders } from '../test/helpers/relay-operator';
import { median, ratio, round } from './stats';
import { startRelay, type Relay } from './time-to-sms';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/helpers/chromium';

export interface ConsoleLoad {
  readonly records: number;
  readonly seedSeconds: number;
  readonly api: { readonly recordsMs: number; readonly routesMs: number; readonly creditMs: number };
  readonly baseline: { readonly logsRecordsMs: number };
  /** Console's first page of records / `logs`' listing of as many. */
  readonly recordsRatio: number;
  readonly browser: { readonly activityMs: number; readonly creditMs: number } | { readonly skipped: string };
}

export interface ConsoleLoadOptions {
  readonly records?: number;
  readonly log?: (line: string) => void;
}

const SENDER_IDS = ['SMSRELAY', 'ALERTS', 'DUKA'];
const PRICE = 20;
const FIXTURES = (repoRoot: string, path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(repoRoot, 'examples', path), 'utf8')) as Record<string, unknown>;

/** Median of 5 runs of `work` after 1 warm-up, in ms. */
async function timed(work: () => Promise<unknown>): Promise<number> {
  return await medianOf(async () => {
    const start = performance.now();
    await work();
    return performance.now() - start;
  });
}

/** Median of 5 runs of `measure` (each giving its own ms) after 1 warm-up. */
async function medianOf(measure: () => Promise<number>): Promise<number> {
  await measure();
  const runs: number[] = [];
  for (let index = 0; index < 5; index += 1) runs.push(await measure());
  return round(median(runs));
}

/**
 * A script for `page.evaluate` that resolves at the first animation frame in which `selector` is in
 * the page (`attached`) and, for `visible`, has a layout box and is not `visibility: hidden`
 * (Playwright's meaning of visible): the frame it is painted in. Playwright's `locator.waitFor`
 * asks from Node at 0, 20, 50, 100 and 100 ms and then every 500 ms (playwright-core's
 * `retryWithProgressAndBackoff`), so content drawn 300 ms after `goto` returned was seen at about
 * 770 ms: that timer counted the poll's schedule, not the page. (`page.evaluate` is not subject to
 * the console's CSP, which refuses `waitForFunction`'s eval.)
 */
function shownInPage(selector: string, state: 'visible' | 'attached'): string {
  return `new Promise((resolve, reject) => {
    const giveUp = setTimeout(() => reject(new Error(${JSON.stringify(`${selector} not ${state} within 30 s`)})), 30000);
    const check = () => {
      const found = document.querySelector(${JSON.stringify(selector)});
      const shown = found !== null && (${JSON.stringify(state)} === 'attached' ||
        (found.getClientRects().length > 0 && found.checkVisibility({ visibilityProperty: true })));
      if (shown) {
        clearTimeout(giveUp);
        resolve(true);
      } else requestAnimationFrame(check);
    };
    check();
  })`;
}

async function getBody(url: string, headers: Readonly<Record<string, string>> = {}): Promise<string> {
  const response = await fetch(url, { headers });
  const body = await response.text();
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${body.slice(0, 300)}`);
  return body;
}

export async function runConsoleLoad(
  repoRoot: string,
  { records = 10_000, log = () => {} }: ConsoleLoadOptions = {},
): Promise<ConsoleLoad> {
  const apiKey = `bench-${randomBytes(8).toString('hex')}`;
  // Enough credit for about 94 % of the SMS: the rest park, as they would on an empty account.
  const sandbox = await startSandbox({
    apiKey,
    balance: Math.round(records * 0.94) * PRICE,
    rate: PRICE,
    senderIds: SENDER_IDS,
  });
  const dir = mkdtempSync(join(tmpdir(), 'sms-relay-bench-console-'));
  let relay: Relay | undefined;
  let browser: Browser | undefined;
  try {
    relay = await startRelay(repoRoot, {
      PORT: '0',
      RELAY_CONFIG: join(repoRoot, 'config/local.yaml'),
      RELAY_SECRETS_FILE: join(dir, 'secrets.json'),
      RELAY_DATA_DIR: join(dir, 'data'),
      PROVIDER_BASE_URL: sandbox.baseUrl,
      PROVIDER_API_KEY: apiKey,
    });
    const url = relay.url;
    const secrets = JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8')) as Record<string, string>;
    const alerts = FIXTURES(repoRoot, 'alertmanager/resolved.json');
    const grafana = FIXTURES(repoRoot, 'grafana/firing.json');

    // Per 100 webhooks: 90 generic notifications, 6 resolved alerts (DROPPED by `when`), 4 Grafana alerts.
    const webhook = (index: number): { route: string; token: string; body: unknown } => {
      const slot = index % 100;
      if (slot < 6)
        return {
          route: 'alerts',
          token: secrets['alerts-token']!,
          body: { ...alerts, groupKey: `bench-${index}`, bench: index },
        };
      if (slot < 10)
        return {
          route: 'grafana',
          token: secrets['grafana-token']!,
          body: { ...grafana, groupKey: `bench-${index}`, bench: index },
        };
      return { route: 'notify', token: secrets['generic-token']!, body: { message: `Bench notification ${index}` } };
    };

    log(`console: seeding ${records} records through ${url}/hooks…`);
    const seedStart = performance.now();
    let written = 0;
    let next = 0;
    const post = async (): Promise<void> => {
      const { route, token, body } = webhook(next++);
      const response = await fetch(`${url}/hooks/${route}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as { ids?: string[] };
      if (response.status !== 202 && response.status !== 200)
        throw new Error(`POST /hooks/${route}: ${response.status} ${JSON.stringify(answer)}`);
      written += answer.ids?.length ?? 0;
    };
    // 32 posts at a time until the records are there (the last round may add a few more).
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (written < records) await post();
      }),
    );
    // /_relay answers the secret of runtime.json, as `sms-relay logs` sends it.
    const operator = await operatorHeaders(url);
    const count = async (state: string): Promise<number> =>
      (JSON.parse(await getBody(`${url}/_relay/records?state=${state}&limit=1`, operator)) as { records: unknown[] })
        .records.length;
    for (;;) {
      if ((await count('PENDING')) === 0 && (await count('SENDING')) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const seedSeconds = round((performance.now() - seedStart) / 1000);
    // Not counted per state here: listing 10,000 records through /_relay/records takes minutes.
    log(`console: ${written} records in ${seedSeconds} s; timing…`);

    // The console answers a signed-in browser only: the banner's one-time link, redeemed once, sets the session cookie.
    if (relay.consoleLink === undefined) throw new Error('the relay printed no console link');
    // The page's API requests carry the cookie and the page token the signed-in page moves on with.
    const tab = await openConsoleLink(relay.consoleLink);
    const session = tab.headers;
    const recordsMs = await timed(() => getBody(`${url}/console/api/records?limit=100`, session));
    const routesMs = await timed(() => getBody(`${url}/console/api/routes`, session));
    const creditMs = await timed(() => getBody(`${url}/console/api/credit`, session));
    const logsRecordsMs = await timed(() => getBody(`${url}/_relay/records?limit=100`, operator));

    let browserResult: ConsoleLoad['browser'];
    if (!existsSync(CHROMIUM)) {
      browserResult = { skipped: `no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)` };
    } else {
      const launched = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      browser = launched;
      /**
       * A fresh context (empty cache) per load, timed from `goto` until `selector` is there: what a
       * person waits for once the address is entered (the context's own creation and closing are
       * the browser profile's, not the page's, and took a third or more of a sample on a busy machine).
       */
      const load = (path: string, selector: string, state: 'visible' | 'attached') => async (): Promise<number> => {
        const context = await launched.newContext({
          viewport: { width: 1280, height: 800 },
          extraHTTPHeaders: { cookie: tab.cookie },
        });
        try {
          // The tab's page token, as the sign-in page would have left it (client/api.ts).
          await context.addInitScript(
            `sessionStorage.setItem(${JSON.stringify(PAGE_TOKEN_KEY)}, ${JSON.stringify(tab.pageToken)})`,
          );
          const page = await context.newPage();
          const start = performance.now();
          await page.goto(`${url}${path}`);
          await page.evaluate(shownInPage(selector, state));
          return performance.now() - start;
        } finally {
          await context.close();
        }
      };
      browserResult = {
        activityMs: await medianOf(load('/console', '[data-testid="activity-row"]', 'visible')),
        creditMs: await medianOf(load('/console#/credit', '[data-testid="balance-chart"] canvas', 'attached')),
      };
    }
    return {
      records: written,
      seedSeconds,
      api: { recordsMs, routesMs, creditMs },
      baseline: { logsRecordsMs },
      recordsRatio: ratio(recordsMs, logsRecordsMs),
      browser: browserResult,
    };
  } finally {
    await browser?.close();
    await relay?.stop();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
