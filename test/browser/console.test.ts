import { launchChromium } from '../helpers/chromium';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../functions/core/config/load';
import { formatTime } from '../../functions/core/time-format';
import { CONSOLE_REQUEST_HEADER, PAGE_TOKEN_KEY } from '../../local/console/contract';
import { listen } from '../../local/shared/listen';
import {
  cleanEnv,
  post,
  readJsonFile,
  REPO_ROOT,
  signedRequest,
  startRelay,
  stopRelay,
  type RelayProcess,
} from '../e2e/support';

/**
 * The console in a real browser: Debian's Chromium driven by playwright-core, against `npm start`
 * (its in-process sandbox SMS service) on loopback. `npm run test:browser`; `.ci/run` installs
 * Chromium when it is missing. Screenshots go to a temporary folder, or to docs/console (the
 * ones docs/local.md shows) with UPDATE_SCREENSHOTS=1.
 */

const SHOTS =
  process.env['UPDATE_SCREENSHOTS'] === '1'
    ? join(REPO_ROOT, 'docs/console')
    : mkdtempSync(join(tmpdir(), 'sms-relay-shots-'));

let dir: string;
let relay: RelayProcess;
let secrets: Record<string, string>;
let browser: Browser;
let page: Page;
let consoleUrl: string;
/** The banner's one-time link (`…/console/?token=…`). */
let link: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sms-relay-browser-'));
  relay = await startRelay(
    cleanEnv({ PORT: '0', RELAY_DATA_DIR: join(dir, 'data'), RELAY_SECRETS_FILE: join(dir, 'secrets.json') }),
  );
  secrets = readJsonFile<Record<string, string>>(join(dir, 'secrets.json'));
  link = /Console\s+(http:\/\/127\.0\.0\.1:\d+\/console\/\?token=[\w-]+)/.exec(relay.banner)?.[1] ?? '';
  consoleUrl = `${relay.url}/console`;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  mkdirSync(SHOTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (relay !== undefined) await stopRelay(relay);
  rmSync(dir, { recursive: true, force: true });
});

const notify = (payload: unknown) =>
  post(relay.url, {
    route: 'notify',
    body: Buffer.from(JSON.stringify(payload)),
    headers: { authorization: `Bearer ${secrets['generic-token']}`, 'content-type': 'application/json' },
  });

async function shot(name: string): Promise<void> {
  const path = join(SHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  expect(statSync(path).size).toBeGreaterThan(5_000);
}

describe('the console in Chromium', () => {
  it("explains how to get in until the banner's one-time link is opened", async () => {
    const answer = await page.goto(consoleUrl);
    expect(answer?.status()).toBe(401);
    expect(await page.textContent('body')).toContain('one-time link printed in the terminal');
  });

  it("is signed in by the banner's one-time link, lands on /console without the token, serves everything from the relay itself", async () => {
    expect(link.startsWith(`${relay.url}/console/?token=`)).toBe(true);
    const foreign: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(relay.url)) foreign.push(request.url());
    });
    await page.goto(link);
    await page.getByTestId('nav-activity').waitFor();
    expect(page.url()).toBe(consoleUrl);
    expect(foreign).toEqual([]);
    const [cookie] = await page.context().cookies(consoleUrl);
    expect(cookie).toMatchObject({ path: '/console', httpOnly: true, sameSite: 'Strict', expires: -1 });
    expect(await page.evaluate('document.cookie')).toBe('');
    // The link is spent: another browser context opening it gets no session.
    const other = await browser.newPage();
    try {
      expect((await other.goto(link))?.status()).toBe(403);
      expect(await other.context().cookies(consoleUrl)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  // The browser sends the console's cookie to every server on 127.0.0.1.
  it('gives another local server the browser visits a cookie that opens nothing; the tab itself keeps working', async () => {
    const seen: (string | undefined)[] = [];
    const foreign = createServer((request, response) => {
      seen.push(request.headers.cookie);
      response.end('<!doctype html><title>elsewhere</title>');
    });
    const foreignPort = await listen(foreign, 0, '127.0.0.1');
    try {
      // The signed-in tab visits another local server, as after following a link.
      await page.goto(`http://127.0.0.1:${foreignPort}/console/anything`);
      const replayed = seen.find((cookie) => cookie?.includes('sms-relay-console-'));
      expect(replayed).toBeDefined();
      // What that server can do with it: the console API answers 401, the page itself holds no data.
      for (const path of ['/api/records', '/api/overview', '/api/routes']) {
        expect({
          path,
          status: (await fetch(`${consoleUrl}${path}`, { headers: { cookie: replayed! } })).status,
        }).toEqual({ path, status: 401 });
      }
      // Back in the console, the tab still reads the API with the page token of its sessionStorage; the cookie alone does not.
      await page.goto(consoleUrl);
      await page.getByTestId('nav-activity').waitFor();
      const status = async (withToken: boolean): Promise<unknown> =>
        await page.evaluate(
          `fetch("/console/api/overview", { headers: ${withToken ? `{ "${CONSOLE_REQUEST_HEADER}": sessionStorage.getItem("${PAGE_TOKEN_KEY}") }` : '{}'} }).then((answer) => answer.status)`,
        );
      expect(await status(true)).toBe(200);
      expect(await status(false)).toBe(401);
    } finally {
      await new Promise<void>((resolve) => foreign.close(() => resolve()));
    }
  });

  it('shows webhooks in Activity as they arrive, without a reload', async () => {
    const before = await page.getByTestId('activity-row').count();
    expect((await notify({ message: 'Backup of db-1 failed', phone: '0754111222' })).status).toBe(202);
    expect(
      (
        await post(
          relay.url,
          signedRequest('alerts', 'alertmanager', 'alertmanager/firing-single.json', secrets['alerts-token']!),
        )
      ).status,
    ).toBe(202);
    expect(
      (
        await post(
          relay.url,
          signedRequest('orders', 'shopify', 'shopify/orders-create.json', secrets['shopify-secret']!),
        )
      ).status,
    ).toBe(202);
    await expect
      .poll(async () => await page.getByTestId('activity-row').count(), { timeout: 20_000 })
      .toBeGreaterThanOrEqual(before + 3);
    await expect
      .poll(async () => await page.locator('[data-testid="activity-row"][data-state="SENT"]').count(), {
        timeout: 20_000,
      })
      .toBeGreaterThanOrEqual(3);
  });

  it('never shows a slow answer for filters no longer chosen', async () => {
    const routesShown = async (): Promise<string[]> => [
      ...new Set(
        await page.$$eval('[data-testid="activity-row"] td:nth-child(2)', (cells) =>
          cells.map((cell) => cell.textContent ?? ''),
        ),
      ),
    ];
    // The answer for route=alerts is held until the one for route=notify has been shown.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = /\/console\/api\/records\?.*route=alerts/;
    await page.route(slow, async (route) => {
      await held;
      await route.continue().catch(() => undefined); // the page may have cancelled it meanwhile
    });
    try {
      await page.getByTestId('filter-route').selectOption('alerts');
      await page.getByTestId('filter-route').selectOption('notify');
      await expect.poll(routesShown, { timeout: 10_000 }).toEqual(['notify']);
      release();
      // The next poll's answer comes after the held one was let go: the rows are still notify's alone.
      await page.waitForResponse((response) => /route=notify/.test(response.url()));
      await page.waitForResponse((response) => /route=notify/.test(response.url()));
      expect(await routesShown()).toEqual(['notify']);
    } finally {
      release();
      await page.unroute(slow);
      await page.getByTestId('filter-route').selectOption('');
    }
  });

  it('opens a record to its SMS and its state changes', async () => {
    const row = page.locator('[data-testid="activity-row"][data-state="SENT"]').filter({ hasText: 'notify' }).first();
    await row.click();
    await page.getByTestId('record-detail').waitFor();
    await expect
      .poll(async () => await page.getByTestId('record-text').textContent())
      .toContain('Backup of db-1 failed');
    expect(await page.getByTestId('record-state').textContent()).toContain('SENT');
    expect(await page.getByTestId('history-entry').count()).toBe(3);
    // Numbers are masked in the page too.
    expect(await page.getByTestId('record-detail').textContent()).not.toContain('0754111222');
    await shot('record');
  });

  it('redrives a parked record from its page', async () => {
    await fetch(`${relay.sandboxUrl}/_sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'status', status: 402, count: 1 }),
    });
    const answer = await notify({ message: 'Parked until a top-up' });
    const [id] = answer.body['ids'] as string[];
    await page.goto(`${consoleUrl}#/activity`);
    const parked = page.locator(`[data-testid="activity-row"][data-id="${id}"][data-state="PARKED"]`);
    await parked.waitFor({ timeout: 20_000 });
    await parked.click();
    await expect
      .poll(async () => await page.getByTestId('record-state').textContent(), { timeout: 10_000 })
      .toContain('PARKED');
    await page.getByTestId('redrive').click();
    await expect
      .poll(async () => await page.getByTestId('record-state').textContent(), { timeout: 20_000 })
      .toContain('SENT');
    expect(await page.getByTestId('history-entry').count()).toBe(6);
    // A few more senders, so the Activity screenshot shows what a day looks like.
    for (const [route, source, fixture, secret] of [
      ['payments', 'stripe', 'stripe/payment_intent.succeeded.json', 'stripe-secret'],
      ['uptime', 'uptime-kuma', 'uptime-kuma/down.json', 'uptime-kuma-token'],
      ['gitlab', 'gitlab', 'gitlab/pipeline-failed.json', 'gitlab-token'],
    ] as const) {
      expect((await post(relay.url, signedRequest(route, source, fixture, secrets[secret]!))).status).toBe(202);
    }
    await page.getByTestId('nav-activity').click();
    await expect
      .poll(async () => await page.locator('[data-testid="activity-row"][data-state="SENT"]').count(), {
        timeout: 20_000,
      })
      .toBeGreaterThanOrEqual(7);
    await shot('activity');
  });

  it('renders the template at every keystroke, with the SMS and its segments', async () => {
    await page.getByTestId('nav-templates').click();
    await page.getByTestId('tpl-route').selectOption('notify');
    await expect
      .poll(async () => await page.getByTestId('tpl-payload').locator('option').count(), { timeout: 10_000 })
      .toBeGreaterThan(1);
    await page.getByTestId('tpl-payload').selectOption({ index: 1 });
    const template = page.getByTestId('tpl-template');
    await template.fill('');
    await template.pressSequentially('Hi {{ message }}');
    await expect
      .poll(async () => await page.getByTestId('tpl-sms').first().textContent(), { timeout: 10_000 })
      .toContain('Hi ');
    expect(await page.getByTestId('tpl-segments').first().textContent()).toBe('1');
    const shortLength = Number(await page.getByTestId('tpl-characters').first().textContent());
    // One character outside GSM-7 (✓) makes it UCS-2, and past 70 characters a UCS-2 SMS takes two segments.
    await template.pressSequentially(` ✓ ${'and more words '.repeat(5)}`);
    await expect
      .poll(async () => await page.getByTestId('tpl-segments').first().textContent(), { timeout: 10_000 })
      .toBe('2');
    expect(Number(await page.getByTestId('tpl-characters').first().textContent())).toBeGreaterThan(shortLength + 70);
    expect(await page.getByTestId('tpl-yaml').textContent()).toContain('notify:');
    await shot('templates');
  });

  it("marks an Opsgenie P1 alert's SMS as one that may spend the credit reserve", async () => {
    await page.getByTestId('nav-templates').click();
    await page.getByTestId('tpl-route').selectOption('og');
    await page.getByTestId('tpl-payload').selectOption({ label: 'example: opsgenie/alertmanager-create.json' });
    await expect
      .poll(async () => await page.getByTestId('tpl-critical').first().textContent(), { timeout: 10_000 })
      .toBe('critical: may spend the reserve');
    expect(await page.getByTestId('tpl-sms').first().textContent()).toContain('[P1] ');
  });

  it('draws the balance chart', async () => {
    await page.getByTestId('nav-credit').click();
    const chart = page.getByTestId('balance-chart');
    await chart.locator('canvas').first().waitFor({ timeout: 10_000 });
    const painted = await chart
      .locator('canvas')
      .first()
      .evaluate((element) => {
        // Runs in the page: a canvas, typed by hand as the test project has no DOM library.
        const canvas = element as unknown as {
          width: number;
          height: number;
          getContext(
            kind: '2d',
          ): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null;
        };
        const context = canvas.getContext('2d');
        if (context === null || canvas.width === 0) return 0;
        const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
        let count = 0;
        for (let index = 3; index < data.length; index += 4) if (data[index]! > 0) count += 1;
        return count;
      });
    expect(painted).toBeGreaterThan(500);
    expect(await page.getByTestId('forecast').textContent()).toMatch(/\S/);
    await shot('credit');
  });

  it("opened on a page, asks the relay for that page's own data first and once, beside the overview, not after it", async () => {
    for (const [hash, own, shown] of [
      ['#/credit', '/console/api/credit?days=14', page.getByTestId('balance-chart').locator('canvas').first()],
      ['', '/console/api/records?limit=50', page.getByTestId('activity-row').first()],
    ] as const) {
      await page.goto('about:blank');
      const asked: string[] = [];
      const listen = (request: { url(): string }) => {
        const url = new URL(request.url());
        if (url.pathname.startsWith('/console/api/')) asked.push(`${url.pathname}${url.search}`);
      };
      page.on('request', listen);
      try {
        await page.goto(`${consoleUrl}${hash}`);
        await shown.waitFor({ timeout: 10_000 });
        expect(asked[0]).toBe(own);
        expect(asked.filter((url) => url === own)).toHaveLength(1);
        expect(asked).toContain('/console/api/overview');
      } finally {
        page.off('request', listen);
      }
    }
  });

  it("opened on Activity, draws its rows in its first render, their times in the browser's zone without a date formatter", async () => {
    // A tab of its own, in a zone half an hour off the hour; every date formatter it builds is counted.
    const pageToken = await page.evaluate(`sessionStorage.getItem(${JSON.stringify(PAGE_TOKEN_KEY)})`);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: 'Asia/Kolkata' });
    try {
      await context.addCookies(await page.context().cookies(consoleUrl));
      await context.addInitScript(`
        sessionStorage.setItem(${JSON.stringify(PAGE_TOKEN_KEY)}, ${JSON.stringify(pageToken)});
        window.__built = 0;
        window.__waitingShown = false;
        const Real = Intl.DateTimeFormat;
        const count = { construct: (target, args) => (window.__built++, Reflect.construct(target, args)), apply: (target, self, args) => (window.__built++, Reflect.apply(target, self, args)) };
        Intl.DateTimeFormat = new Proxy(Real, count);
        new MutationObserver(() => {
          const app = document.getElementById('app');
          if (app !== null && /Loading…|connecting…/.test(app.textContent ?? '')) window.__waitingShown = true;
          if (window.__firstDraw === undefined && document.querySelector('.shell') !== null)
            window.__firstDraw = { at: performance.now(), rows: document.querySelector('[data-testid="activity-row"]') !== null, waiting: window.__waitingShown };
          if (window.__builtAtRows === undefined && document.querySelector('[data-testid="activity-row"]') !== null) window.__builtAtRows = window.__built;
        }).observe(document, { subtree: true, childList: true, characterData: true });`);
      const tab = await context.newPage();
      await tab.goto(consoleUrl);
      const row = tab.getByTestId('activity-row').first();
      await row.waitFor({ timeout: 10_000 });
      const seen = (await tab.evaluate(`({
        firstDraw: window.__firstDraw,
        builtAtRows: window.__builtAtRows,
        // When the scripts were in (the first draw's 1 s wait starts after), and the early answers.
        scriptsIn: Math.max(...performance.getEntriesByType('resource').filter((entry) => entry.initiatorType !== 'fetch').map((entry) => entry.responseEnd)),
        answersIn: Math.max(...['/api/records?', '/api/overview'].map((asked) => performance.getEntriesByType('resource').find((entry) => entry.name.includes(asked)).responseEnd)),
      })`)) as {
        firstDraw: { at: number; rows: boolean; waiting: boolean };
        builtAtRows: number;
        scriptsIn: number;
        answersIn: number;
      };
      expect(seen.builtAtRows).toBe(0);
      // The shell is drawn only once the first answers are in, or after waiting 1 s for them (a busy machine)…
      expect(
        seen.firstDraw.at > seen.answersIn || seen.firstDraw.at >= seen.scriptsIn + 1000,
        JSON.stringify(seen),
      ).toBe(true);
      // …and drawn before that wait is over, it shows the rows at once, never Loading… first.
      if (seen.firstDraw.at < seen.scriptsIn + 1000)
        expect(seen.firstDraw).toMatchObject({ rows: true, waiting: false });
      // The time shown is the one a formatter in that zone gives.
      const id = await row.getAttribute('data-id');
      const { records } = (await tab.evaluate(`fetch('/console/api/records?limit=50', {
        headers: { ${JSON.stringify(CONSOLE_REQUEST_HEADER)}: ${JSON.stringify(pageToken)} } }).then((answer) => answer.json())`)) as {
        records: { id: string; updatedAt: string }[];
      };
      const shown = records.find((record) => record.id === id);
      expect(await row.locator('td.time a').textContent()).toBe(
        formatTime(shown!.updatedAt, { zone: 'Asia/Kolkata', seconds: true, relative: false }),
      );
    } finally {
      await context.close();
    }
  });

  it('opened while the relay is slow to list, draws the shell with Loading… and then the rows when they come', async () => {
    const pageToken = await page.evaluate(`sessionStorage.getItem(${JSON.stringify(PAGE_TOKEN_KEY)})`);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      await context.addCookies(await page.context().cookies(consoleUrl));
      await context.addInitScript(
        `sessionStorage.setItem(${JSON.stringify(PAGE_TOKEN_KEY)}, ${JSON.stringify(pageToken)})`,
      );
      // The listing's answer is held until the shell has been drawn without it.
      await context.route('**/console/api/records?*', async (route) => {
        await held;
        await route.continue();
      });
      const tab = await context.newPage();
      await tab.goto(consoleUrl);
      await tab.getByTestId('nav-activity').waitFor({ timeout: 10_000 });
      await tab.getByText('Loading…').first().waitFor({ timeout: 10_000 });
      expect(await tab.getByTestId('activity-row').count()).toBe(0);
      release();
      await tab.getByTestId('activity-row').first().waitFor({ timeout: 10_000 });
    } finally {
      release();
      await context.close();
    }
  });

  it("opened on Activity, runs neither uPlot nor the other pages' code; opened on Credit, asks for its code beside its data", async () => {
    // A tab of its own with an empty cache (the console's chunks may be kept), signed in as this one.
    const pageToken = await page.evaluate(`sessionStorage.getItem(${JSON.stringify(PAGE_TOKEN_KEY)})`);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      await context.addCookies(await page.context().cookies(consoleUrl));
      await context.addInitScript(
        `sessionStorage.setItem(${JSON.stringify(PAGE_TOKEN_KEY)}, ${JSON.stringify(pageToken)})`,
      );
      const tab = await context.newPage();
      const scripts = new Map<string, Promise<string>>();
      const asked: string[] = [];
      tab.on('request', (request) => asked.push(new URL(request.url()).pathname));
      tab.on('response', (response) => {
        if (response.request().resourceType() === 'script')
          scripts.set(new URL(response.url()).pathname, response.text());
      });
      await tab.goto(consoleUrl);
      await tab.getByTestId('activity-row').first().waitFor({ timeout: 10_000 });
      const activity = await Promise.all(scripts.values());
      expect([...scripts.keys()]).toContain('/console/app.js');
      // uPlot's canvas overlay; the Credit, Templates, Routes and On call pages' own elements.
      for (const other of ['u-over', 'balance-chart', 'tpl-payload', 'route-card', 'oncall-now'])
        expect(activity.join('\n'), other).not.toContain(other);

      scripts.clear();
      asked.length = 0;
      await tab.goto('about:blank');
      await tab.goto(`${consoleUrl}#/credit`);
      await tab.getByTestId('balance-chart').locator('canvas').first().waitFor({ timeout: 10_000 });
      const credit = await Promise.all([...scripts].map(async ([path, text]) => [path, await text] as const));
      const chart = credit.find(([, text]) => text.includes('balance-chart'))?.[0];
      expect(chart).toMatch(/^\/console\/chunk-[A-Z0-9]+\.js$/);
      // Asked for as the script starts, before the overview the page is drawn with.
      expect(asked.indexOf(chart!)).toBeLessThan(asked.indexOf('/console/api/overview'));
    } finally {
      await context.close();
    }
  });

  it('lists every route with its webhook URL', async () => {
    // As many cards as the shipped config has routes (it gains example routes with new features).
    const routes = loadConfigFile(join(REPO_ROOT, 'config/local.yaml')).routes.size;
    await page.getByTestId('nav-routes').click();
    await expect.poll(async () => await page.getByTestId('route-card').count(), { timeout: 10_000 }).toBe(routes);
    expect(await page.locator('[data-testid="route-card"][data-route="notify"]').textContent()).toContain(
      `${relay.url}/hooks/notify`,
    );
    await shot('routes');
  });

  it('mutes a route from its card: its webhooks are dropped with the reason until Unmute', async () => {
    const card = page.locator('[data-testid="route-card"][data-route="notify"]');
    await card.getByTestId('mute-open').click();
    await card.getByTestId('mute-for').fill('2h');
    await card.getByTestId('mute-reason').fill('db upgrade');
    await card.getByTestId('mute-confirm').click();
    await expect
      .poll(async () => await card.getByTestId('muted').textContent(), { timeout: 10_000 })
      .toMatch(/^muted until .*\d\d:\d\d( Africa\/Dar_es_Salaam)?: db upgrade$/);
    const muted = await notify({ message: 'During the upgrade' });
    expect(muted.body).toMatchObject({ status: 'dropped', reason: (await card.getByTestId('muted').textContent())! });
    await card.getByTestId('unmute').click();
    await card.getByTestId('mute-open').waitFor({ timeout: 10_000 });
    expect((await notify({ message: 'After the upgrade' })).status).toBe(202);
  });

  it("shows on the cards the digest window, the quiet hours, the heartbeat's last webhook and the month's credits", async () => {
    const card = (route: string) => page.locator(`[data-testid="route-card"][data-route="${route}"]`);
    await page.getByTestId('nav-routes').click();
    expect(await card('alert-digest').getByTestId('digest-window').textContent()).toBe('one SMS per 10m window');
    expect(await card('alert-digest').getByTestId('quiet-hours').textContent()).toBe('none');
    const quiet = card('nightly').getByTestId('quiet-hours');
    expect(await quiet.textContent()).toBe('22:00–07:00 every day');
    expect(await quiet.getAttribute('title')).toBe('Africa/Dar_es_Salaam');
    expect(await card('notify').getByTestId('digest-window').textContent()).toBe('off: each message on its own');
    // Heartbeat: nothing heard yet, then a (never texted, `when: "false"`) Watchdog webhook is seen.
    const heartbeat = card('watchdog').getByTestId('heartbeat');
    expect(await heartbeat.textContent()).toMatch(/last seen never, every 5m$/);
    expect(await card('notify').getByTestId('heartbeat').count()).toBe(0);
    expect(
      (
        await post(
          relay.url,
          signedRequest('watchdog', 'alertmanager', 'alertmanager/firing-single.json', secrets['alerts-token']!),
        )
      ).status,
    ).toBe(200);
    await expect
      .poll(async () => await heartbeat.textContent(), { timeout: 30_000 })
      .toMatch(/last seen \d\d:\d\d \((just now|\d+ min ago)\), every 5m$/);
    // Month: the order posted in Activity reserved credits of the route's 3000 a month.
    const month = card('orders').locator('[data-kind="month"]');
    expect(await month.locator('.limit-line').textContent()).toMatch(/^Credits this month[1-9][\d,]* \/ 3,000/);
    expect(await card('notify').locator('[data-kind="month"]').count()).toBe(0);
  });

  it("filters Activity by DEFERRED and opens a digest's waiting record to the reason it waits", async () => {
    await page.getByTestId('nav-activity').click();
    const states = page.getByTestId('filter-state').locator('option');
    await expect.poll(async () => await states.count(), { timeout: 10_000 }).toBeGreaterThan(1);
    expect(await states.allTextContents()).toEqual(expect.arrayContaining(['DEFERRED', 'DIGESTED']));
    const answer = await post(
      relay.url,
      signedRequest('alert-digest', 'alertmanager', 'alertmanager/firing-single.json', secrets['alerts-token']!),
    );
    expect(answer.status).toBe(202);
    const [id] = answer.body['ids'] as string[];
    try {
      await page.getByTestId('filter-state').selectOption('DEFERRED');
      const row = page.locator(`[data-testid="activity-row"][data-id="${id}"][data-state="DEFERRED"]`);
      await row.waitFor({ timeout: 20_000 });
      await expect
        .poll(
          async () => [
            ...new Set(
              await page
                .getByTestId('activity-row')
                .evaluateAll((rows) => rows.map((element) => element.getAttribute('data-state'))),
            ),
          ],
          { timeout: 10_000 },
        )
        .toEqual(['DEFERRED']);
      expect(await row.locator('.reason').textContent()).toMatch(
        /^digest window until (\d{4}-\d\d-\d\d )?\d\d:\d\d(?: [A-Z][\w/+-]*)?: goes out in the route's digest$/,
      );
      await row.click();
      await page.locator(`[data-testid="record-detail"][data-id="${id}"]`).waitFor({ timeout: 10_000 });
      expect(await page.getByTestId('record-state').textContent()).toContain('DEFERRED');
      expect(await page.getByTestId('record-text').textContent()).toBe('DiskAlmostFull db-01.internal:9100');
      // The story: recorded DEFERRED with the reason and the time its window ends; no digest yet.
      const deferred = page.locator('[data-testid="history-entry"][data-state="DEFERRED"]');
      expect(await deferred.count()).toBe(1);
      expect(await deferred.locator('.reason').textContent()).toMatch(
        /^digest window until (\d{4}-\d\d-\d\d )?\d\d:\d\d(?: [A-Z][\w/+-]*)?: goes out in the route's digest$/,
      );
      expect(await page.getByTestId('digest-links').count()).toBe(0);
      expect(await page.getByTestId('redrive').count()).toBe(0);
    } finally {
      await page.getByTestId('nav-activity').click();
      await page.getByTestId('filter-state').selectOption('');
    }
  });
});
