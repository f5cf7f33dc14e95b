import { describe, expect, it } from 'vitest';
import { compileConfig } from '../../../../functions/core/config/compile';
import { ConfigError } from '../../../../functions/core/config/errors';
import { loadConfig } from '../../../../functions/core/config/load';
import { parseConfig } from '../../../../functions/core/config/parse';
import {
  configView,
  readStagedConfig,
  STAGED_CONFIG_FORMAT,
  stageConfig,
} from '../../../../functions/core/config/staged';
import { literalRecipients } from '../../../../functions/core/config/view';
import { RecipientEntryKind } from '../../../../functions/core/recipients/types';

const TEXT = `
provider: { baseUrl: "https://sms.example.co.tz", defaultSenderId: ACME }
secrets: sms-relay/test
balance: { threshold: 100, notify: ["0712 345 678", "+255712345678", "0754111222"] }
routes:
  alerts:
    source: alertmanager
    secret: alerts-token
    recipients: ["0712345678, 0754 111 222", "{{ commonAnnotations.oncall_phone }}", "+255 765 333 444"]
    limits: { messages: 5, window: 1h }
  orders:
    source: shopify
    secret: shop
    recipients: ["{{ customer.phone }}"]
    senderId: DUKA
    template: "Order {{ name }}"
`;

const staged = (): ReturnType<typeof stageConfig> =>
  JSON.parse(JSON.stringify(stageConfig(loadConfig(TEXT, 'test.yaml')))) as ReturnType<typeof stageConfig>;

describe('stageConfig', () => {
  it('writes the validated config with its defaults and the numbers the handlers would otherwise normalise', () => {
    const result = staged();
    expect(result.format).toBe(STAGED_CONFIG_FORMAT);
    expect(result.config).toEqual(JSON.parse(JSON.stringify(parseConfig(TEXT))));
    expect(result.config.routes['alerts']!.limits).toEqual({ messages: 5, window: 3600 });
    expect(result.balanceNotify).toEqual(['255712345678', '255754111222']);
    expect(result.recipients).toEqual({
      alerts: [['255712345678', '255754111222'], null, ['255765333444']],
      orders: [null],
    });
  });
});

describe('readStagedConfig and configView', () => {
  it('give the sender, sweeper and balance watch what they read, without compiling anything', () => {
    const view = configView(readStagedConfig(JSON.stringify(staged()), 'relay-config.json')!);
    const loaded = loadConfig(TEXT, 'test.yaml');
    expect(view.settings).toEqual(JSON.parse(JSON.stringify(loaded.settings)));
    expect(view.balanceNotify).toEqual(loaded.balanceNotify);
    expect([...view.routes.keys()]).toEqual([...loaded.routes.keys()]);
    for (const [id, route] of view.routes) {
      const compiled = loaded.routes.get(id)!;
      expect(route).toEqual({
        id,
        config: JSON.parse(JSON.stringify(compiled.config)),
        senderId: compiled.senderId,
        recipientNumbers: compiled.recipientNumbers,
      });
      expect(literalRecipients(route)).toEqual(literalRecipients(compiled));
      expect(route).not.toHaveProperty('template');
    }
    expect(view.routes.get('alerts')!.senderId).toBe('ACME');
    expect(literalRecipients(view.routes.get('alerts')!)).toEqual(['255712345678', '255754111222', '255765333444']);
  });

  it('leaves JSON that is not a staged config to the validating loader', () => {
    expect(readStagedConfig(JSON.stringify(parseConfig(TEXT)), 'config.json')).toBeUndefined();
    expect(readStagedConfig('[1, 2]', 'config.json')).toBeUndefined();
  });

  it('refuses text that is not JSON, another format, and a staged config missing its parts', () => {
    expect(() => readStagedConfig('{ "format": ', 'relay-config.json')).toThrow(ConfigError);
    expect(() =>
      readStagedConfig(JSON.stringify({ ...staged(), format: 'sms-relay/staged-config@0' }), 'relay-config.json'),
    ).toThrow(/format: "sms-relay\/staged-config@0"/);
    const problemsOf = (value: unknown): readonly string[] => {
      try {
        readStagedConfig(JSON.stringify(value), 'relay-config.json');
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems;
      }
      throw new Error('expected a ConfigError');
    };
    const { recipients: _recipients, ...withoutRecipients } = staged();
    expect(problemsOf(withoutRecipients)).toEqual(['recipients: missing']);
    expect(problemsOf({ ...staged(), recipients: { alerts: [null], orders: [null] } })).toEqual([
      'recipients.alerts: missing or not one per recipient',
    ]);
    expect(problemsOf({ format: STAGED_CONFIG_FORMAT })).toEqual([
      'config: missing or not a validated relay config',
      'balanceNotify: missing',
      'recipients: missing',
    ]);
  });
});

describe('compileConfig given what an earlier compile worked out', () => {
  it('takes the staged numbers instead of normalising again, and compiles the templates as usual', () => {
    const result = staged();
    // Numbers a real normalisation would never produce show which were taken as given.
    const recipientNumbers = {
      alerts: [['255700000001', '255700000002'], null, ['255700000003']],
      orders: [null],
    } as const;
    const compiled = compileConfig(result.config, 'relay-config.json', {
      recipientNumbers: (id) => recipientNumbers[id as keyof typeof recipientNumbers],
      balanceNotify: ['255700000009'],
    });
    expect(compiled.balanceNotify).toEqual(['255700000009']);
    const alerts = compiled.routes.get('alerts')!;
    expect(alerts.recipientNumbers).toEqual(recipientNumbers.alerts);
    expect(alerts.recipients.entries.map((entry) => entry.kind)).toEqual([
      RecipientEntryKind.Literal,
      RecipientEntryKind.Template,
      RecipientEntryKind.Literal,
    ]);
    expect(alerts.recipients.entries[0]).toMatchObject({
      numbers: ['255700000001', '255700000002'],
      display: '2557****001, 2557****002',
    });
    expect(
      compiled.routes.get('orders')!.engine.render(compiled.routes.get('orders')!.template, { name: '#1001' }).text,
    ).toBe('Order #1001');
  });

  it('normalises an entry whose given numbers do not match its pieces', () => {
    const result = staged();
    const compiled = compileConfig(result.config, 'relay-config.json', {
      recipientNumbers: () => [['255700000001'], null, ['255700000003']],
      balanceNotify: result.balanceNotify,
    });
    // "0712345678, 0754 111 222" is two numbers: one given number cannot be its own.
    expect(compiled.routes.get('alerts')!.recipientNumbers).toEqual([
      ['255712345678', '255754111222'],
      null,
      ['255700000003'],
    ]);
  });
});
