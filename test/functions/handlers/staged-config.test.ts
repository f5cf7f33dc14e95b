import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { Liquid } from 'liquidjs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { ConfigError } from '../../../functions/core/config/errors';
import { loadConfig } from '../../../functions/core/config/load';
import { handler } from '../../../functions/handlers/ingest';
import { compiledConfig, ingestContext } from '../../../functions/handlers/wiring/compiled';
import { loadRelayConfig } from '../../../functions/handlers/wiring/config';
import { lambdaRelay, resetLambdaRelay } from '../../../functions/handlers/wiring/context';
import { createStore, ensureTable, type MessageStore } from '../../../functions/store';
import { stagedConfigText } from '../../../infra/staging';
import { type Dynalite, startDynalite } from '../../helpers/dynalite';
import {
  apiEvent,
  type Captured,
  captureStdout,
  handlerConfig,
  lambdaContext,
  ROUTE_TOKEN,
  stubEnvironment,
} from './support';

const scratch = mkdtempSync(join(tmpdir(), 'staged-config-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const yamlText = stringify(handlerConfig('https://sms.example.co.tz'));
const write = (name: string, text: string): string => {
  const path = join(scratch, `${randomUUID()}-${name}`);
  writeFileSync(path, text);
  return path;
};
const stagedPath = (): string => write('relay-config.json', stagedConfigText(yamlText, 'handler.yaml'));

describe('loadRelayConfig', () => {
  it('reads a staged JSON config as it is: the view, nothing compiled', async () => {
    const view = await loadRelayConfig({ configPath: stagedPath() });
    const loaded = loadConfig(yamlText, 'handler.yaml');
    expect(view.settings).toEqual(JSON.parse(JSON.stringify(loaded.settings)));
    expect(view.balanceNotify).toEqual(['255712345678']);
    expect(view.routes.get('alerts')).toEqual({
      id: 'alerts',
      config: loaded.routes.get('alerts')!.config,
      senderId: 'ALERTS',
      recipientNumbers: [['255712345678']],
    });
    expect(view.routes.get('alerts')).not.toHaveProperty('template');
  });

  it('parses, validates and compiles a YAML config, and a JSON one that is not staged', async () => {
    for (const path of [
      write('relay-config.yaml', yamlText),
      write('config.json', JSON.stringify(handlerConfig('https://sms.example.co.tz'))),
    ]) {
      const loaded = await loadRelayConfig({ configPath: path });
      expect(loaded.routes.get('alerts')).toHaveProperty('template');
      expect(loaded.balanceNotify).toEqual(['255712345678']);
    }
    await expect(
      loadRelayConfig({ configPath: write('config.json', JSON.stringify({ provider: {} })) }),
    ).rejects.toThrow(ConfigError);
  });

  it('applies PROVIDER_BASE_URL and BALANCE_THRESHOLD to either', async () => {
    for (const configPath of [stagedPath(), write('relay-config.yaml', yamlText)]) {
      const { settings: config } = await loadRelayConfig({
        configPath,
        providerBaseUrl: 'http://127.0.0.1:9',
        balanceThreshold: 7,
      });
      expect(config.provider.baseUrl).toBe('http://127.0.0.1:9');
      expect(config.balance?.threshold).toBe(7);
    }
  });

  it('names a missing file and a staged config of another format', async () => {
    await expect(loadRelayConfig({ configPath: join(scratch, 'missing.json') })).rejects.toThrow(
      /missing\.json: invalid config[\s\S]*cannot read the file \(ENOENT\)/,
    );
    await expect(loadRelayConfig({ configPath: join(scratch, 'missing.yaml') })).rejects.toThrow(
      /cannot read the file \(ENOENT\)/,
    );
    const other = write('relay-config.json', JSON.stringify({ format: 'sms-relay/staged-config@9' }));
    await expect(loadRelayConfig({ configPath: other })).rejects.toThrow(ConfigError);
  });
});

describe('compiledConfig', () => {
  it('compiles a staged config once, with the staged numbers, and passes a compiled one through', async () => {
    const view = await loadRelayConfig({ configPath: stagedPath() });
    const compiled = compiledConfig(view, 'relay-config.json');
    expect(compiledConfig(view, 'relay-config.json')).toBe(compiled);
    expect(compiled.settings).toBe(view.settings);
    expect(compiled.routes.get('alerts')!.recipientNumbers).toEqual([['255712345678']]);
    expect(
      compiled.routes
        .get('ops')!
        .engine.render(compiled.routes.get('ops')!.template, { message: 'hi' }, { trackMissing: false }).text,
    ).toBe('hi');
    const loaded = await loadRelayConfig({ configPath: write('relay-config.yaml', yamlText) });
    expect(compiledConfig(loaded, 'relay-config.yaml')).toBe(loaded);
  });
});

describe('compiledConfig of a staged config (what Lambda init does)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('parses no template until a webhook renders one: checked at synth, a route parses only its own', async () => {
    const view = await loadRelayConfig({ configPath: stagedPath() });
    const parses = vi.spyOn(Liquid.prototype, 'parse');
    const compiled = compiledConfig(view, 'relay-config.json');
    expect(parses).not.toHaveBeenCalled();
    const ops = compiled.routes.get('ops')!;
    expect(ops.engine.render(ops.template, { message: 'hi' }, { trackMissing: false }).text).toBe('hi');
    expect(parses).toHaveBeenCalledTimes(1);
  });
});

describe('ingest handler with the staged config', () => {
  const secretsManager = mockClient(SecretsManagerClient);
  let db: Dynalite;
  let store: MessageStore;
  let out: Captured;

  beforeAll(async () => {
    db = await startDynalite();
  });
  afterAll(async () => {
    secretsManager.restore();
    await db?.close();
  });
  beforeEach(async () => {
    const tableName = `staged-${randomUUID()}`;
    await ensureTable(db.client, tableName);
    store = createStore({ client: db.client, tableName });
    const secretId = `arn:aws:secretsmanager:eu-west-1:123456789012:secret:sms-relay-${randomUUID()}`;
    secretsManager.reset();
    secretsManager
      .on(GetSecretValueCommand, { SecretId: secretId })
      .resolves({ SecretString: JSON.stringify({ providerApiKey: 'k', 'alerts-token': ROUTE_TOKEN }) });
    stubEnvironment({
      RELAY_CONFIG: stagedPath(),
      TABLE_NAME: tableName,
      DYNAMODB_ENDPOINT: db.endpoint,
      SECRET_ID: secretId,
    });
    resetLambdaRelay();
    out = captureStdout();
  });
  afterEach(() => {
    out.restore();
    vi.unstubAllEnvs();
    resetLambdaRelay();
  });

  it('records a webhook, with the route compiled from the staged config', async () => {
    const response = await handler(
      apiEvent({
        route: 'ops',
        body: JSON.stringify({ message: 'Backup failed' }),
        headers: { authorization: `Bearer ${ROUTE_TOKEN}` },
      }),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(202);
    const { ids } = JSON.parse(response.body!) as { ids: string[] };
    expect(await store.getMessage(ids[0]!)).toMatchObject({
      route: 'ops',
      text: 'Backup failed',
      to: ['255754111222'],
      senderId: 'OPS',
    });
    // The shared runtime holds the view; ingest's context the compiled config, built once.
    const runtime = await lambdaRelay();
    expect(runtime.context.config.routes.get('ops')).not.toHaveProperty('template');
    expect(ingestContext(runtime)).toBe(ingestContext(runtime));
    expect(ingestContext(runtime).config.routes.get('ops')).toHaveProperty('template');
  });

  it('refuses to start when STALE_SENDING_MS is not above the SMS service time-out', async () => {
    vi.stubEnv('STALE_SENDING_MS', '5000');
    resetLambdaRelay();
    const timeoutMs = handlerConfig('https://sms.example.co.tz').provider.timeoutMs ?? 10_000;
    expect(timeoutMs).toBeGreaterThanOrEqual(5_000);
    await expect(lambdaRelay()).rejects.toMatchObject({
      name: 'EnvironmentError',
      problems: [
        `STALE_SENDING_MS (5000) must be above provider.timeoutMs (${timeoutMs}): a send still waiting for its answer would be taken for a stale one`,
      ],
    });
  });
});
