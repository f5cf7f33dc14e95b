import { launchChromium } from '../helpers/chromium';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../local/sandbox/server';
import type { RunningSandbox } from '../../local/sandbox/types';
import {
  eventually,
  fixture,
  moveClockAhead,
  runCli,
  startRelayOn,
  stopRelay,
  type RelayOnSandbox,
} from '../e2e/support';

/**
 * Paging in a real browser (Debian's Chromium, playwright-core) against `npm start` on loopback:
 * the acknowledge page a phone opens from the SMS (a GET shows and never acts; the button POSTs),
 * the console's On call view and an incident's story on its records.
 */

const API_KEY = 'paging-browser-provider-key-41d9';
const ASHA = '255712345678';
const BARAKA = '255754000111';

let dir: string;
let sandbox: RunningSandbox;
let running: RelayOnSandbox | undefined;
let browser: Browser;
let page: Page;
/** A phone's screen (412 × 915 CSS pixels, as a Pixel 7's): where the acknowledge page is read. */
let phone: Page;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sms-relay-paging-browser-'));
  sandbox = await startSandbox({
    apiKey: API_KEY,
    balance: 100_000,
    rate: 20,
    senderIds: ['SMSRELAY'],
    defaultSenderId: 'SMSRELAY',
  });
  // A rotation of a day from 2026-01-01 09:00: whoever it names today, the other is on call tomorrow.
  writeFileSync(
    join(dir, 'relay.yaml'),
    `
provider: { baseUrl: http://127.0.0.1:4010, defaultSenderId: SMSRELAY }
people:
  asha:   { phone: "0712345678" }
  baraka: { phone: "0754000111" }
schedules:
  ops:
    timezone: Africa/Dar_es_Salaam
    rotation: { people: [asha, baraka], every: 1d, start: "2026-01-01T09:00" }
routes:
  alerts:
    source: alertmanager
    secret: alerts-token
    recipients: ["person:asha"]
    escalate:
      - after: 1m
        to: ["person:baraka"]
    ack: {}
`,
  );
  running = await startRelayOn(dir, { providerUrl: sandbox.baseUrl, apiKey: API_KEY, movableClock: true });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1024, height: 900 } });
  phone = await browser.newPage({
    viewport: { width: 412, height: 915 },
    deviceScaleFactor: 2.625,
    isMobile: true,
    hasTouch: true,
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (running !== undefined) await stopRelay(running.relay);
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

// A path of 90 characters without a space: on a phone it must wrap, not push the page sideways.
const LONG_PATH = `/srv/${'postgresql_archive_'.repeat(4)}wal/0000000100000A2B000000C4`;

const alert = (): string => {
  const body = JSON.parse(fixture('alertmanager/firing-single.json').toString('utf8')) as {
    status: string;
    commonAnnotations: { summary: string };
  };
  body.status = 'firing';
  body.commonAnnotations.summary = `${LONG_PATH} is 94% full`;
  return JSON.stringify(body);
};

const incidents = async (): Promise<{ id: string; level: number }[]> =>
  JSON.parse((await runCli(['incidents', '--json'], running!.env)).stdout) as { id: string; level: number }[];

describe('paging in Chromium', () => {
  let barakaLink = '';

  it('opens the acknowledge page on a phone: state first, names, times with how long ago, who is next, a button; no sideways scroll, no script; a GET acknowledges nothing', async () => {
    const { relay, secrets } = running!;
    const posted = await fetch(`${relay.url}/hooks/alerts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secrets['alerts-token']!}`, 'content-type': 'application/json' },
      body: alert(),
    });
    expect(posted.status).toBe(202);
    await eventually(async () => sandbox.messages().find((sent) => sent.phoneNumbers.includes(ASHA)), {
      what: 'the alert SMS to asha',
    });
    moveClockAhead(running!, 61_000);
    const escalation = await eventually(
      async () => sandbox.messages().find((sent) => sent.phoneNumbers.includes(BARAKA)),
      { what: 'the escalation SMS to baraka', timeoutMs: 60_000, intervalMs: 500 },
    );
    barakaLink = / (http:\/\/127\.0\.0\.1:\d+\/a\/[A-Za-z0-9_-]{22})$/.exec(escalation.message)?.[1] ?? '';
    expect(barakaLink).not.toBe('');

    for (let visit = 0; visit < 2; visit += 1) {
      const answer = await phone.goto(barakaLink);
      expect(answer?.status()).toBe(200);
      const button = phone.getByRole('button', { name: 'Acknowledge' });
      await button.waitFor();
      expect(await phone.textContent('blockquote')).toContain('DiskAlmostFull');
      // The state is the first thing under the title.
      expect(await phone.textContent('h1 + p')).toBe('Not acknowledged yet.');
      const body = (await phone.textContent('body')) ?? '';
      expect(body).toMatch(/Sent to baraka \(2557\*\*\*\*111\)\. Opened \d\d:\d\d \((1|2) min ago\), route alerts\./);
      expect(body).toMatch(/\d\d:\d\d \((1|2) min ago\) sent to asha \(2557\*\*\*\*678\)/);
      expect(body).toMatch(/\d\d:\d\d \(just now\) escalated to baraka \(2557\*\*\*\*111\)/);
      // Its one step is taken: acknowledging stops nothing more.
      expect(body).toContain('Every step has been taken: nobody else will be paged.');
      expect(body).toMatch(/Times in [A-Za-z_/]+, 24-hour clock\./);
      expect(body).not.toMatch(/acknowledged by|T\d\d:\d\d:\d\d/i);
      expect(body).not.toMatch(/255754000111|255712345678/);
      // An expression, not a function: the test's TypeScript has no DOM types.
      const layout = (await phone.evaluate(
        '({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, scripts: document.scripts.length, fontPx: Number.parseFloat(getComputedStyle(document.body).fontSize) })',
      )) as { scrollWidth: number; innerWidth: number; scripts: number; fontPx: number };
      console.log(`acknowledge page at 412 px: ${JSON.stringify(layout)}`);
      expect(layout).toMatchObject({ innerWidth: 412, scripts: 0 });
      expect(layout.scrollWidth).toBeLessThanOrEqual(layout.innerWidth);
      expect(layout.fontPx).toBeGreaterThanOrEqual(16);
      // A button a thumb can press.
      expect((await button.boundingBox())!.height).toBeGreaterThanOrEqual(44);
    }
    expect(await incidents()).toEqual([expect.objectContaining({ level: 1 })]);
  });

  it('acknowledges on the button: the page says so first, who and when, the incident is closed', async () => {
    await phone.getByRole('button', { name: 'Acknowledge' }).tap();
    await phone.getByText('Acknowledged. Escalation has stopped.').waitFor();
    expect(await phone.textContent('.state')).toMatch(
      /^Acknowledged by baraka \(2557\*\*\*\*111\) via link at \d\d:\d\d \(just now\)\. Escalation has stopped\.$/,
    );
    expect(await phone.textContent('h1')).toBe('Acknowledged');
    expect(await phone.getByRole('button', { name: 'Acknowledge' }).count()).toBe(0);
    expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(412);
    expect(await incidents()).toEqual([]);
  });

  it("shows the On call view and the incident's story on its records in the console", async () => {
    const link = /Console\s+(http:\/\/127\.0\.0\.1:\d+\/console\/\?token=[\w-]+)/.exec(running!.relay.banner)?.[1];
    expect(link).toBeDefined();
    await page.goto(link!);
    await page.getByTestId('nav-oncall').click();
    const card = page.getByTestId('schedule-card');
    await card.waitFor();
    const now = (await page.getByTestId('oncall-now').textContent()) ?? '';
    // On the schedule's clock, its zone named (the browser's is not Dar es Salaam's); the date is left out
    // when the handoff falls on today (a run between 00:00 and 09:00 there), how far when within a day.
    expect(now).toMatch(
      /^(asha \(2557\*\*\*\*678\)|baraka \(2557\*\*\*\*111\)) until ((\d{4}-)?\d\d-\d\d )?09:00 Africa\/Dar_es_Salaam( \(in \d+ (min|h)\))?$/,
    );
    const handoffs = await page.getByTestId('handoff').allTextContents();
    expect(handoffs).toHaveLength(3);
    // Each handoff hands to the other of the two, at 09:00 on the schedule's clock.
    const first = now.startsWith('asha') ? 'baraka' : 'asha';
    expect(
      handoffs.map(
        (line) => line.replace(/^((\d{4}-)?\d\d-\d\d )?09:00 Africa\/Dar_es_Salaam( \([^)]*\))? → /, '').split(' ')[0],
      ),
    ).toEqual([first, first === 'asha' ? 'baraka' : 'asha', first]);
    expect(await card.textContent()).not.toMatch(/255754000111|255712345678/);

    // An override shows, and wins.
    expect(
      (
        await runCli(
          ['oncall', 'override', 'ops', '--person', 'baraka', '--for', '8h', '--reason', 'asha travels'],
          running!.env,
        )
      ).stderr,
    ).toBe('');
    await page.reload();
    await page.getByTestId('override').waitFor();
    expect(await page.getByTestId('override').textContent()).toContain('baraka (2557****111) from');
    expect(await page.getByTestId('oncall-now').textContent()).toMatch(
      /^baraka \(2557\*\*\*\*111\) until .* \(override: asha travels\)$/,
    );

    // The escalation's record tells the incident's story, people named beside their masked numbers.
    await page.getByTestId('nav-activity').click();
    const row = page.getByTestId('activity-row').filter({ hasText: '2557****111' }).first();
    await row.waitFor();
    await row.click();
    await page.getByTestId('incident-story').waitFor();
    const story = await page.getByTestId('story-entry').allTextContents();
    expect(story).toEqual([
      // Each step that sent an SMS carries that SMS's state.
      expect.stringMatching(/^\d\d:\d\d sent to asha \(2557\*\*\*\*678\) SENT$/),
      expect.stringMatching(/^\d\d:\d\d escalated to baraka \(2557\*\*\*\*111\) SENT$/),
      expect.stringMatching(/^\d\d:\d\d acknowledged by baraka \(2557\*\*\*\*111\) via link$/),
    ]);
  });
});
