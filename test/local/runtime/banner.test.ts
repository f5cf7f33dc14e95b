import { describe, expect, it } from 'vitest';
import { renderBanner, type BannerInfo } from '../../../local/runtime/banner';

const INFO: BannerInfo = {
  url: 'http://127.0.0.1:3000',
  consoleLink: 'http://127.0.0.1:3000/console/?token=t',
  routes: [{ id: 'notify', source: 'generic' }],
  sandboxUrl: 'http://127.0.0.1:4001',
  sandboxAccount: 'balance 10000 TZS, 20 TZS per SMS',
  providerBaseUrl: 'http://127.0.0.1:4001',
  configPath: 'examples/providers.yaml',
  secretsPath: '.relay/secrets.json',
  secretsCreated: false,
  secretsAdded: [],
  dataDir: '.relay/data',
  balanceSchedule: 'every 5 minutes',
  example: undefined,
};

describe('the start-up banner', () => {
  it('names each provider’s sandbox and inbox when the config has several', () => {
    const banner = renderBanner({
      ...INFO,
      providerSandboxes: [
        { name: 'main', type: 'sms-service', url: 'http://127.0.0.1:4001' },
        { name: 'at', type: 'africastalking', url: 'http://127.0.0.1:4002' },
      ],
    });
    expect(banner).toContain('  SMS        a sandbox per provider (balance 10000 TZS, 20 TZS per SMS)');
    expect(banner).toContain(
      '             main (sms-service)   http://127.0.0.1:4001  inbox http://127.0.0.1:4001/_sandbox/messages',
    );
    expect(banner).toContain(
      '             at (africastalking)  http://127.0.0.1:4002  inbox http://127.0.0.1:4002/_sandbox/messages',
    );
  });

  it('keeps the one sandbox’s SMS and Inbox lines for a config of one provider', () => {
    const banner = renderBanner({
      ...INFO,
      providerSandboxes: [{ name: 'main', type: 'sms-service', url: 'http://127.0.0.1:4001' }],
    });
    expect(banner).toContain(
      '  SMS        sandbox SMS service at http://127.0.0.1:4001 (balance 10000 TZS, 20 TZS per SMS); set PROVIDER_BASE_URL to use another',
    );
    expect(banner).toContain('  Inbox      http://127.0.0.1:4001/_sandbox/messages');
  });
});
