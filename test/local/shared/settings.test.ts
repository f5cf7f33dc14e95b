import { describe, expect, it } from 'vitest';
import { displayPath, localPath, parsePort, resolveRuntimeSettings } from '../../../local/shared/settings';

describe('settings', () => {
  it('take options over the environment over the defaults', () => {
    const settings = resolveRuntimeSettings(
      { port: '4000' },
      {
        PORT: '5000',
        RELAY_DATA_DIR: 'somewhere',
        PROVIDER_BASE_URL: 'https://sms.example/api',
        PROVIDER_API_KEY: 'k',
      },
      '/repo',
    );
    expect(settings).toMatchObject({
      port: 4000,
      host: '127.0.0.1',
      configPath: '/repo/config/local.yaml',
      secretsPath: '/repo/.relay/secrets.json',
      dataDir: '/repo/somewhere',
      providerBaseUrl: 'https://sms.example/api',
      providerApiKey: 'k',
      maxBodyBytes: 262_144,
      jsonLogs: false,
    });
    expect(resolveRuntimeSettings({}, {}, '/repo').port).toBe(3000);
    expect(resolveRuntimeSettings({}, { PORT: '0', RELAY_LOG_FORMAT: 'JSON' }, '/repo')).toMatchObject({
      port: 0,
      jsonLogs: true,
    });
  });

  it('refuse values that cannot work, naming the variable', () => {
    expect(() => parsePort('70000')).toThrow('PORT: expected a port from 0 to 65535');
    expect(() => resolveRuntimeSettings({}, { MAX_BODY_BYTES: '0' })).toThrow(
      'MAX_BODY_BYTES: expected a whole number above 0',
    );
    expect(() => resolveRuntimeSettings({}, { PROVIDER_BASE_URL: 'ftp://sms.example' })).toThrow(
      'PROVIDER_BASE_URL: expected an http(s) URL',
    );
    // A key inside the URL would be printed in the banner.
    expect(() => resolveRuntimeSettings({}, { PROVIDER_BASE_URL: 'https://user:pass@sms.example' })).toThrow(
      'must not contain credentials',
    );
    // Tests only: a crash point the runtime does not know would silently never crash.
    expect(() => resolveRuntimeSettings({}, { RELAY_CRASH_AT: 'somewhere' })).toThrow(
      'RELAY_CRASH_AT: expected one of balance-disarmed, low-balance-recorded, got "somewhere"',
    );
    expect(resolveRuntimeSettings({}, { RELAY_CRASH_AT: 'balance-disarmed' }).crashAt).toBe('balance-disarmed');
    expect(resolveRuntimeSettings({}, {}).crashAt).toBeUndefined();
  });

  it('resolve the commands paths the way start does', () => {
    expect(localPath('dataDir', undefined, { RELAY_DATA_DIR: '/data' }, '/repo')).toBe('/data');
    expect(localPath('secrets', 'mine.json', { RELAY_SECRETS_FILE: '/x.json' }, '/repo')).toBe('/repo/mine.json');
    expect(localPath('config', undefined, {}, '/repo')).toBe('/repo/config/local.yaml');
    expect(displayPath('/repo/.relay/secrets.json', '/repo')).toBe('.relay/secrets.json');
    expect(displayPath('/elsewhere/secrets.json', '/repo')).toBe('/elsewhere/secrets.json');
  });
});
