import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../functions/core/config/load';
import { readAlarmEndpoint } from '../../../../functions/core/config/alarms-schema';
import { problemsOf } from './support';

const BASE =
  'provider: { baseUrl: "https://sms.example.co.tz" }\nroutes:\n  ci: { source: github, secret: gh, recipients: ["+255712345678"] }\n';

describe('alarms: who each kind of alarm reaches', () => {
  it('reads each entry by its kind: e-mail, a phone number (E.164, for SNS SMS) or an https URL', () => {
    const { settings: config } = loadConfig(
      `${BASE}alarms:\n  page: ["oncall@example.com", "+255 712 345 678", "https://hc.example.com/ping/abc-123"]\n  ticket: ["ops@example.com"]\n`,
    );
    expect(config.alarms).toEqual({
      page: [
        { kind: 'email', endpoint: 'oncall@example.com' },
        { kind: 'sms', endpoint: '+255712345678' },
        { kind: 'https', endpoint: 'https://hc.example.com/ping/abc-123' },
      ],
      ticket: [{ kind: 'email', endpoint: 'ops@example.com' }],
    });
  });

  it('takes a number of another country, and a Tanzanian one written nationally', () => {
    expect(readAlarmEndpoint('+254 712 345 678')).toEqual({ kind: 'sms', endpoint: '+254712345678' });
    expect(readAlarmEndpoint('0712345678')).toEqual({ kind: 'sms', endpoint: '+255712345678' });
  });

  it('leaves either kind out as an empty list', () => {
    expect(loadConfig(`${BASE}alarms:\n  ticket: ["ops@example.com"]\n`).settings.alarms?.page).toEqual([]);
  });

  it('refuses an entry that is none of the three, naming its key and never echoing it', () => {
    const problems = problemsOf(
      `${BASE}alarms:\n  page: ["oncall@example.com", "pager-duty-key-123"]\n  ticket: ["http://hc.example.com/ping/secret-id", "+255 12"]\n`,
    );
    expect(problems).toEqual([
      'alarms.page[1]: is none of an e-mail address, a phone number in international form (+255712345678) or an https:// URL',
      'alarms.ticket[0]: an alarm URL must be https://',
      'alarms.ticket[1]: is none of an e-mail address, a phone number in international form (+255712345678) or an https:// URL',
    ]);
    expect(problems.join('\n')).not.toMatch(/secret-id|pager-duty-key/);
  });

  it('refuses an unknown key under alarms, naming it', () => {
    expect(problemsOf(`${BASE}alarms:\n  pager: ["oncall@example.com"]\n`)).toEqual(['alarms: unknown option "pager"']);
  });

  it('reads deliveryLatencyP99 as a duration, and refuses one that is not', () => {
    expect(loadConfig(`${BASE}alarms: { deliveryLatencyP99: 2m }\n`).settings.alarms?.deliveryLatencyP99).toBe(120);
    expect(problemsOf(`${BASE}alarms: { deliveryLatencyP99: soon }\n`)).toEqual([
      'alarms.deliveryLatencyP99: "soon" is not a duration above 0; use e.g. 60s, 2m',
    ]);
  });
});
