import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../functions/core/config/load';
import { configView, stageConfig } from '../../../../functions/core/config/staged';
import { evaluateWebhook } from '../../../../functions/core/pipeline/evaluate';
import { compiledConfig } from '../../../../functions/handlers/wiring/compiled';
import { problemsOf } from '../config/support';
import { webhookOf } from '../sources/helpers';

/** A config with people and one route whose recipients come from the request. */
const config = ({ source = 'goalert', recipients = '["{{ query.to }}"]', allow = '["person:*"]' } = {}): string => `
provider:
  baseUrl: https://sms.example.co.tz
people:
  asha:   { phone: "0712345678" }
  baraka: { phone: "0754000111" }
routes:
  pager:
    source: ${source}
    secret: pager-token
    recipients: ${recipients}
${allow === '' ? '' : `    allowRecipients: ${allow}`}
`;

const TOKEN = 'pager-token-value';
const page = (to: string, body = '{"AppName":"GoAlert","Type":"Test"}') =>
  webhookOf({ body, query: { to, token: TOKEN } });
const evaluate = (text: string, to: string, body?: string) =>
  evaluateWebhook(loadConfig(text, 'test.yaml').routes.get('pager')!, page(to, body), { secret: TOKEN });

describe('validate: a route taking numbers from the request lists who may be texted', () => {
  it.each([
    ['a goalert route with a templated recipient', config({ allow: '' })],
    [
      'a grafana-oncall route reading a payload field',
      config({ source: 'grafana-oncall', recipients: '["{{ event.user.phone }}"]', allow: '' }),
    ],
    ['any route whose recipient reads the query', config({ source: 'generic', allow: '' })],
  ])('refuses %s without allowRecipients', (_case, text) => {
    expect(problemsOf(text)).toEqual([
      expect.stringMatching(
        /^routes\.pager\.allowRecipients: required, since recipients take numbers from the request \(\{\{ query\.to \}\}|\{\{ event\.user\.phone \}\}\)/,
      ),
    ]);
  });

  it('takes literal recipients on a goalert route without a list (nothing comes from the request)', () => {
    expect(loadConfig(config({ recipients: '["0712345678"]', allow: '' }), 'test.yaml').routes.has('pager')).toBe(true);
  });

  it.each([
    ['an unknown person', '["person:carol"]', 'routes.pager.allowRecipients: [0] unknown person "carol"'],
    [
      'oncall:, which is not a fixed list',
      '["oncall:ops"]',
      'routes.pager.allowRecipients: [0] oncall: is not taken here; name people (person:<name> or person:*), numbers or a prefix like 2557*',
    ],
    [
      'a prefix no provider texts (sms-service texts +255 only)',
      '["2547*"]',
      'routes.pager.allowRecipients: [0] no provider for +2547…',
    ],
    [
      'an empty list',
      '[]',
      'routes.pager.allowRecipients: list at least one entry: person:*, a number or a prefix like 2557*',
    ],
  ])('refuses %s', (_case, allow, problem) => {
    expect(problemsOf(config({ allow }))).toContain(problem);
  });

  it.each([
    ['a prefix with digits before 255', '["1255*"]', 'no provider for +1255…'],
    ['a prefix longer than a whole number', '["2557123456789*"]', 'a prefix longer than a whole number'],
    [
      'a prefix of no country',
      '["999*"]',
      'a prefix is a country code and digits or a national 0, like +2557*, 2547* or 07*',
    ],
  ])('refuses %s (it could match no number a provider texts)', (_case, allow, reason) => {
    expect(problemsOf(config({ allow }))).toContain(`routes.pager.allowRecipients: [0] ${reason}`);
  });

  it('refuses a literal that is not a phone number, saying why', () => {
    expect(problemsOf(config({ allow: '["12345"]' }))).toEqual([
      expect.stringMatching(/^routes\.pager\.allowRecipients: \[0\] \S/),
    ]);
  });
});

describe('allowRecipients at send time', () => {
  it('sends to a listed person (person:*), whatever form the URL writes the number in', () => {
    for (const to of ['255712345678', '0712345678', '+255 754 000 111']) {
      expect(evaluate(config(), to)).toMatchObject({ verdict: 'send' });
    }
  });

  it('DROPS a number outside the list, saying which (masked) and why', () => {
    const evaluation = evaluate(config(), '255799000111');
    expect(evaluation).toMatchObject({
      verdict: 'dropped',
      reason: 'no valid recipient: 2557****111 is not in allowRecipients',
      messages: [],
    });
    expect(evaluation.dropped).toEqual([
      { item: 0, entry: '{{ query.to }}', reason: '2557****111 is not in allowRecipients' },
    ]);
    expect(JSON.stringify(evaluation)).not.toContain('255799000111');
  });

  it('takes numbers and prefixes', () => {
    const text = config({ allow: '["0788 000 111", "25568*", "+2556 9*"]' });
    expect(evaluate(text, '0788000111').verdict).toBe('send');
    expect(evaluate(text, '255687000222').verdict).toBe('send');
    expect(evaluate(text, '0690000333').verdict).toBe('send');
    expect(evaluate(text, '0712345678').verdict).toBe('dropped');
  });

  it('takes a named person, a prefix written 06* and a number written with dashes', () => {
    const text = config({ allow: '["person:asha", "06*", "0788-000-111"]' });
    expect(evaluate(text, '0712345678').verdict).toBe('send');
    expect(evaluate(text, '0690000333').verdict).toBe('send');
    expect(evaluate(text, '255788000111').verdict).toBe('send');
    // baraka is in people but not named.
    expect(evaluate(text, '0754000111').verdict).toBe('dropped');
  });

  it('matches a prefix at the start of the number only: 25568* sends to 255687000222 and DROPS 255712556801, which has 25568 inside', () => {
    const text = config({ allow: '["25568*"]' });
    expect(evaluate(text, '255687000222').verdict).toBe('send');
    expect(evaluate(text, '255712556801')).toMatchObject({
      verdict: 'dropped',
      reason: 'no valid recipient: 2557****801 is not in allowRecipients',
    });
  });

  it('sends the allowed numbers of a request naming several, and drops the others', () => {
    const evaluation = evaluate(
      config({ source: 'generic', recipients: '["{{ query.to }}"]' }),
      '0712345678,0799000111',
      '{"message":"x"}',
    );
    expect(evaluation.verdict).toBe('send');
    expect(evaluation.messages[0]!.to).toEqual(['255712345678']);
    expect(evaluation.dropped).toEqual([
      { item: 0, entry: '{{ query.to }}', reason: '2557****111 is not in allowRecipients' },
    ]);
  });

  it('never exposes the token to templates: query.token is not in the scope', () => {
    const text = config({ source: 'generic' }).replace(
      'routes:\n  pager:',
      'routes:\n  pager:\n    template: "to={{ query.to }} token={{ query.token }}"',
    );
    expect(evaluate(text, '0712345678', '{}').messages[0]!.text).toBe('to=0712345678 token=');
  });

  it('holds in the config the Lambda functions load (staged at synth)', () => {
    const staged = stageConfig(loadConfig(config(), 'test.yaml'));
    const route = compiledConfig(configView(JSON.parse(JSON.stringify(staged))), 'relay-config.json').routes.get(
      'pager',
    )!;
    expect(evaluateWebhook(route, page('255799000111'), { secret: TOKEN }).verdict).toBe('dropped');
    expect(evaluateWebhook(route, page('255754000111'), { secret: TOKEN }).verdict).toBe('send');
  });
});
