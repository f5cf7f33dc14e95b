import { describe, expect, it } from 'vitest';
import { GRAFANA_ONCALL, grafanaOncall } from '../../../../functions/core/sources/grafana-oncall';
import type { AuthContext } from '../../../../functions/core/sources/types';
import { webhookOf } from './helpers';
import { fixtureBytes, fixtureJson, renderDefault } from './pack-helpers';

const SECRET = 'oc4Hn8Rt2Wq6Lm0Vb3Xc7Kd1Jf5Gs9Pz';
const context: AuthContext = { secret: SECRET, toleranceSeconds: 300 };

/**
 * What OnCall sends (engine/apps/webhooks/models/webhook.py, build_request_kwargs): the webhook's
 * "Authorization Header" field verbatim, or "Username"/"Password" through requests' HTTPBasicAuth.
 */
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const personal = fixtureBytes('grafana-oncall/personal-notification.json');
const post = (body: Uint8Array | string, headers: Record<string, string> = {}, query: Record<string, string> = {}) =>
  webhookOf({
    body,
    headers: { 'Content-Type': 'application/json', 'User-Agent': 'python-requests/2.32.3', ...headers },
    query,
  });

describe("grafana-oncall.authenticate: OnCall signs nothing, so the route's credential", () => {
  it('accepts the Authorization Header field set to "Bearer <secret>"', () => {
    expect(grafanaOncall.authenticate(post(personal, { Authorization: `Bearer ${SECRET}` }), context)).toEqual({
      ok: true,
    });
  });

  it('accepts Username/Password as Basic auth with the secret as the password', () => {
    expect(grafanaOncall.authenticate(post(personal, { Authorization: basic('oncall', SECRET) }), context)).toEqual({
      ok: true,
    });
  });

  it('refuses a wrong or missing credential, without quoting the secret', () => {
    const wrong = grafanaOncall.authenticate(post(personal, { Authorization: basic('oncall', 'guess') }), context);
    expect(wrong).toEqual({ ok: false, reason: 'basic credential does not match' });
    expect(grafanaOncall.authenticate(post(personal), context).ok).toBe(false);
    expect(JSON.stringify(wrong)).not.toContain(SECRET);
  });
});

describe("grafana-oncall default template: modelled on OnCall's SMS, with the alert group's link", () => {
  it.each([
    [
      'grafana-oncall/personal-notification.json',
      'Grafana OnCall: "InstanceDown api-01" (1 alert) https://oncall.example.com/a/grafana-oncall-app/alert-groups/I6HNZGUFG4K11',
    ],
    [
      'grafana-oncall/acknowledge.json',
      'Grafana OnCall: "InstanceDown api-01" acknowledged by asha https://oncall.example.com/a/grafana-oncall-app/alert-groups/I6HNZGUFG4K11',
    ],
    [
      'grafana-oncall/resolve.json',
      'Grafana OnCall: "InstanceDown api-01" resolved by asha https://oncall.example.com/a/grafana-oncall-app/alert-groups/I6HNZGUFG4K11',
    ],
  ])('%s', (path, text) => {
    expect(renderDefault(grafanaOncall, fixtureJson(path))).toBe(text);
  });

  it('shortens a long title so that the link still fits 160 characters', () => {
    const body = fixtureJson('grafana-oncall/personal-notification.json');
    const long = {
      ...body,
      alert_group: {
        ...(body['alert_group'] as object),
        title: 'Replication lag above threshold on '.repeat(6),
        alerts_count: 4,
      },
    };
    const text = renderDefault(grafanaOncall, long);
    expect(text.length).toBeLessThanOrEqual(160);
    expect(text).toMatch(
      /^Grafana OnCall: "Replication lag .*\.\.\." \(4 alerts\) https:\/\/oncall\.example\.com\/\S+I6HNZGUFG4K11$/,
    );
  });
});

describe('grafana-oncall.dedupe', () => {
  const keyOf = (body: Uint8Array | string, query: Record<string, string> = {}) => {
    const webhook = post(body, {}, query);
    return grafanaOncall.dedupe(grafanaOncall.parse(webhook), webhook);
  };
  const retried = Buffer.from(personal)
    .toString('utf8')
    .replace('2026-11-28T07:12:03.518204+00:00', '2026-11-28T07:12:17.902113+00:00');

  it('catches a retry of a personal notification, rebuilt with a new event.time, within a minute', () => {
    expect(keyOf(retried)).toEqual(keyOf(personal));
    expect(keyOf(personal).windowSeconds).toBe(GRAFANA_ONCALL.retriedEventWindowSeconds);
  });

  it('tells apart two users notified about one alert group, and two URLs', () => {
    const baraka = Buffer.from(personal).toString('utf8').replace('"id": "UVMX6YI9VY9PV"', '"id": "U2KQ7MZ1B4WXA"');
    expect(keyOf(baraka).key).not.toBe(keyOf(personal).key);
    expect(keyOf(personal, { to: '255754000111' }).key).not.toBe(keyOf(personal, { to: '255712345678' }).key);
  });

  it('keys a status change on its own time, for a day', () => {
    const resolve = keyOf(fixtureBytes('grafana-oncall/resolve.json'));
    expect(resolve).toEqual({
      key: 'grafana-oncall:I6HNZGUFG4K11:resolve:2026-11-28T07:31:10.004811+00:00:none',
      windowSeconds: GRAFANA_ONCALL.statusEventWindowSeconds,
    });
    expect(resolve.key).not.toBe(keyOf(fixtureBytes('grafana-oncall/acknowledge.json')).key);
  });
});
