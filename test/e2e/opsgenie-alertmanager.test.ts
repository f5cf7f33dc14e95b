import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../local/sandbox/types';
import { testWithRelay } from '../helpers/fixtures';
import { eventually, moveClockAhead, runCli, type RelayOnSandbox } from './support';

/**
 * Debian's Alertmanager (the `prometheus-alertmanager` package; `.ci/run` installs it when missing)
 * with an `opsgenie_configs` receiver whose `api_url` is the local relay's `og` route: the real
 * integration, not a body written after it. In `npm run test:slow`: Alertmanager's grouping and the
 * sweeper's escalation take several seconds of waiting.
 */
const ALERTMANAGER = process.env['ALERTMANAGER_BIN'] ?? 'prometheus-alertmanager';
const ASHA = '255712345678';
const BARAKA = '255754000111';

let sandbox: RunningSandbox;
let running: RelayOnSandbox | undefined;

const test = testWithRelay({
  movableClock: true,
  config: `
provider: { baseUrl: http://127.0.0.1:4010, defaultSenderId: SMSRELAY }
people:
  asha:   { phone: "0712345678" }
  baraka: { phone: "0754000111", email: baraka@example.com }
schedules:
  ops:
    timezone: Africa/Dar_es_Salaam
    rotation: { people: [asha], every: 1w, start: "2026-11-30T09:00" }
routes:
  og:
    source: opsgenie
    secret: opsgenie-key
    recipients: ["person:baraka"]
    escalate: [{ after: 1m, to: ["person:baraka"] }]
    ack: {}
`,
});
test.beforeAll(({ sandbox: service, relay }) => {
  sandbox = service;
  running = relay;
}, 180_000);

/** A running Alertmanager: its API's URL, and how to stop it. */
interface Alertmanager {
  readonly url: string;
  readonly log: () => string;
  stop(): Promise<void>;
}

/**
 * Starts the binary on loopback: its API on a port the kernel picks (read from its log), clustering
 * off, its state in a temporary directory. Rejects (the test fails, never skips) when the binary
 * is missing or does not start.
 */
async function startAlertmanager(config: string): Promise<Alertmanager> {
  const dir = mkdtempSync(join(tmpdir(), 'sms-relay-alertmanager-'));
  writeFileSync(join(dir, 'alertmanager.yml'), config);
  const child: ChildProcess = spawn(
    ALERTMANAGER,
    [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      '--web.listen-address=127.0.0.1:0',
      '--cluster.listen-address=',
      '--log.level=debug',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => void (log += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => void (log += chunk.toString('utf8')));
  // A binary that cannot be run emits 'error' and never 'exit'.
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const started = await new Promise<string>((resolve, reject) => {
      child.once('error', (error) =>
        reject(
          new Error(
            `cannot run ${ALERTMANAGER} (${error.message}): install Debian's prometheus-alertmanager (.ci/run does)`,
          ),
        ),
      );
      child.once('exit', (code) => reject(new Error(`${ALERTMANAGER} exited with ${code} before listening:\n${log}`)));
      const listening = setInterval(() => {
        const port = /msg="Listening on" address=127\.0\.0\.1:(\d+)/.exec(log)?.[1];
        if (port === undefined) return;
        clearInterval(listening);
        resolve(`http://127.0.0.1:${port}`);
      }, 50);
      child.once('exit', () => clearInterval(listening));
      child.once('error', () => clearInterval(listening));
    });
    return { url: started, log: () => log, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Posts alerts to Alertmanager's own API, as Prometheus does. */
async function postAlerts(alertmanager: Alertmanager, alerts: readonly Record<string, unknown>[]): Promise<void> {
  const response = await fetch(`${alertmanager.url}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(alerts),
  });
  expect(response.status, await response.text()).toBe(200);
}

const DISK = {
  labels: { alertname: 'DiskFull', instance: 'db-1:9100', severity: 'critical' },
  annotations: { summary: 'Disk on db-1 is 95% full' },
  generatorURL: 'http://prometheus.example:9090/graph',
};

describe("Alertmanager's opsgenie_configs pointed at the relay (the real binary)", () => {
  it('a firing alert sends one SMS to the on-call responder, its resolve closes the incident and no escalation follows', async () => {
    const { relay, env, secrets } = running!;
    const key = secrets['opsgenie-key']!;
    const alertmanager = await startAlertmanager(`
route:
  receiver: relay
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: relay
    opsgenie_configs:
      - api_url: ${relay.url}/hooks/og/
        api_key: ${key}
        send_resolved: true
        update_alerts: true
        priority: P1
        responders: [{ type: schedule, name: ops }]
`);
    try {
      const incidents = async (): Promise<{ id: string; route: string; level: number }[]> => {
        const listed = await runCli(['incidents', '--json'], env);
        expect(listed.stderr).toBe('');
        return JSON.parse(listed.stdout) as { id: string; route: string; level: number }[];
      };
      const disk = () => sandbox.messages().filter((sent) => sent.message.includes('DiskFull'));

      await postAlerts(alertmanager, [DISK]);
      // The schedule Alertmanager names as responder (ops: asha on call), not the route's recipients.
      const [sms] = await eventually(async () => (disk().length > 0 ? disk() : undefined), {
        what: "the alert's SMS",
        timeoutMs: 60_000,
      });
      expect(sms!.phoneNumbers).toEqual([ASHA]);
      expect(sms!.message).toMatch(
        new RegExp(`^\\[P1\\] \\[FIRING:1\\] DiskFull .*${relay.url.replace(/[.]/g, '\\.')}/a/`),
      );
      const [opened] = await eventually(
        async () => ((await incidents()).length === 1 ? await incidents() : undefined),
        {
          what: 'the open incident',
        },
      );

      // Resolved: Alertmanager sends its close (POST …/close?identifierType=alias), which closes the incident.
      await postAlerts(alertmanager, [{ ...DISK, endsAt: new Date(Date.now() - 1_000).toISOString() }]);
      await eventually(async () => ((await incidents()).length === 0 ? true : undefined), {
        what: "the incident closed by Alertmanager's resolve",
        timeoutMs: 60_000,
      });

      // A second alert, posted straight to the API (its first SMS to asha) and left open, shows when
      // escalations have run: once its escalation reaches baraka, the resolved alert's would have too.
      const control = await fetch(`${relay.url}/hooks/og/v2/alerts`, {
        method: 'POST',
        headers: { authorization: `GenieKey ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          message: 'Backup of db-2 failed',
          alias: 'backup-db-2',
          responders: [{ type: 'user', username: 'asha' }],
        }),
      });
      expect(control.status).toBe(202);
      await eventually(async () => ((await incidents()).length === 1 ? true : undefined), {
        what: 'the control incident',
      });
      moveClockAhead(running!, 61_000);
      await eventually(
        async () =>
          sandbox
            .messages()
            .some((sent) => sent.phoneNumbers.includes(BARAKA) && sent.message.includes('Backup of db-2'))
            ? true
            : undefined,
        { what: "the control alert's escalation to baraka", timeoutMs: 60_000, intervalMs: 500 },
      );
      expect(disk(), 'one SMS for the DiskFull alert, no escalation of it').toHaveLength(1);
      expect((await incidents()).map((incident) => incident.id)).not.toContain(opened!.id);
    } finally {
      await alertmanager.stop();
    }
  }, 240_000);
});
