/**
 * Screenshots of every console page, desktop (1280 px) and phone (412 px), with the SMS service's
 * balance at 0 (two SMS parked) and an open incident: the browser in Europe/Berlin, the routes in
 * Africa/Dar_es_Salaam. A script, not a test: `npx tsx test/browser/screenshots.ts <folder>`
 * (default /work/shots/after). Needs Chromium (`apt-get install chromium`) and `npm run build`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '../../local/sandbox/server';
import { launchChromium } from '../helpers/chromium';
import { fixture, records, startRelayOn, stopRelay } from '../e2e/support';

const API_KEY = 'screenshots-provider-key-7f3a';
const out = process.argv[2] ?? '/work/shots/after';
const PAGES = ['', 'templates', 'credit', 'routes', 'oncall'] as const;

const dir = mkdtempSync(join(tmpdir(), 'sms-relay-shots-'));
const sandbox = await startSandbox({ apiKey: API_KEY, balance: 0, rate: 20, senderIds: ['SMSRELAY'] });
writeFileSync(
  join(dir, 'relay.yaml'),
  `
provider: { baseUrl: http://127.0.0.1:4010, defaultSenderId: SMSRELAY }
balance: { threshold: 100 }
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
    timeZone: Africa/Dar_es_Salaam
    recipients: ["oncall:ops"]
    escalate:
      - after: 10m
        to: ["person:baraka"]
    ack: {}
  notify:
    source: generic
    secret: generic-token
    timeZone: Africa/Dar_es_Salaam
    recipients: ["0712345678"]
    template: "{{ message }}"
`,
);
const running = await startRelayOn(dir, { providerUrl: sandbox.baseUrl, apiKey: API_KEY });
const browser = await launchChromium();
try {
  const { relay, secrets } = running;
  for (const message of ['Backup of db-1 failed', 'Backup of db-2 failed'])
    await fetch(`${relay.url}/hooks/notify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secrets['generic-token']!}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message }),
    });
  await fetch(`${relay.url}/hooks/alerts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secrets['alerts-token']!}`, 'content-type': 'application/json' },
    body: fixture('alertmanager/firing-single.json'),
  });
  // A script outside vitest: its own wait for the three SMS to park.
  for (let tries = 0; (await records(relay.url, 'state=PARKED')).length < 3; tries += 1) {
    if (tries > 300) throw new Error('the three SMS did not park');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const link = /Console\s+(http:\/\/127\.0\.0\.1:\d+\/console\/\?token=[\w-]+)/.exec(relay.banner)?.[1] ?? '';
  const context = await browser.newContext({ timezoneId: 'Europe/Berlin', viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(link);
  await page.getByTestId('nav-activity').waitFor();
  const alertRecord = (await records(relay.url, 'route=alerts'))[0]?.id;
  const shown = [...PAGES, ...(alertRecord === undefined ? [] : [`records/${alertRecord}`])];
  mkdirSync(out, { recursive: true });
  for (const width of [1280, 412]) {
    await page.setViewportSize({ width, height: width === 412 ? 915 : 900 });
    for (const path of shown) {
      await page.goto(`${relay.url}/console/#/${path}`);
      await page.waitForLoadState('networkidle');
      await page
        .getByText(/^(Loading…|connecting…)$/)
        .first()
        .waitFor({ state: 'detached', timeout: 20_000 });
      const name = `${path === '' ? 'activity' : path.split('/')[0]}-${width}.png`;
      await page.screenshot({ path: join(out, name), fullPage: true });
      const scrollWidth = await page.evaluate('document.documentElement.scrollWidth');
      console.log(`${name}: scrollWidth ${String(scrollWidth)}`);
    }
  }
} finally {
  await browser.close();
  await stopRelay(running.relay);
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
}
