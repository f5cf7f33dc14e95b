import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../../helpers/fixtures';
import { loadConfig, type LoadedConfig } from '../../../functions/core/config/load';
import { evaluateWebhook } from '../../../functions/core/pipeline/evaluate';
import { Verdict } from '../../../functions/core/pipeline/verdict';
import { SOURCES } from '../../../functions/core/sources/registry';
import { secretProblem } from '../../../functions/core/sources/secret-check';
import { examplePayloads, fixtureHeaders } from '../../../local/shared/fixture-headers';
import { ensureSecretsFile, requiredSecrets } from '../../../local/runtime/secrets';
import { signWebhook } from '../../../local/runtime/signers';
import { acme } from '../../helpers/acme-pack';

/** The registry with one more line: all a new source adds besides its module. */
const TEST_SOURCES = { ...SOURCES, acme };

/**
 * A route of the new source: loaded as a config would load it (a route needs a shipped source to
 * pass the schema), then given the new pack and the pack's default template, as `compileRoute`
 * does for a registered one.
 */
function acmeConfig(): LoadedConfig {
  const loaded = loadConfig(
    'provider: { baseUrl: "https://x.example" }\nsecrets: s\nroutes:\n  orders:\n    source: generic\n    secret: acme-secret\n    recipients: ["0712345678"]\n',
  );
  const route = loaded.routes.get('orders')!;
  return {
    ...loaded,
    routes: new Map([
      ['orders', { ...route, pack: acme, template: route.engine.compileTemplate(acme.defaultTemplate) }],
    ]),
  };
}

const inbound = (body: Uint8Array, headers: Record<string, string>) => ({
  body,
  headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
  query: {},
  receivedAt: new Date(),
});

let dir: string;
test.beforeEach(({ tempDir }) => {
  dir = tempDir;
});

describe('a new source is one pack module and one registry line', () => {
  test('gets a secret of its kind, is signed by its pack, verified by its pack and rendered with its default template', () => {
    const loaded = acmeConfig();
    expect(Object.fromEntries(requiredSecrets(loaded))).toEqual({ providerApiKey: 'provider', 'acme-secret': 'whsec' });
    const { values } = ensureSecretsFile(join(dir, 'secrets.json'), loaded);
    const secret = values['acme-secret']!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(secretProblem(acme, ` ${secret} `)).toBeUndefined();

    const body = new TextEncoder().encode('{"order":{"id":"A-17","status":"paid"}}');
    const headers = signWebhook('acme', { body, secret, headers: { 'Acme-Delivery': 'd-1' } }, TEST_SOURCES);
    expect(headers).toMatchObject({
      'Content-Type': 'application/json',
      'Acme-Event': 'order',
      'Acme-Delivery': 'd-1',
    });

    const route = loaded.routes.get('orders')!;
    const evaluation = evaluateWebhook(route, inbound(body, headers), { secret });
    expect(evaluation).toMatchObject({ verdict: Verdict.Send, dedupeKey: expect.stringContaining('acme:') });
    expect(evaluation.messages.map((message) => message.text)).toEqual(['Acme A-17: paid']);

    const forged = signWebhook('acme', { body, secret: `${secret}x` }, TEST_SOURCES);
    expect(evaluateWebhook(route, inbound(body, forged), { secret })).toMatchObject({
      verdict: Verdict.Unauthorized,
      reason: 'Acme-Signature does not match the body',
    });
  });

  test('finds its examples in its own directory, with the event its file names give', () => {
    mkdirSync(join(dir, 'acme-examples'));
    writeFileSync(join(dir, 'acme-examples', 'refund-issued.json'), '{"order":{"id":"A-18","status":"refunded"}}');
    expect(examplePayloads(dir, 'acme', TEST_SOURCES)).toEqual(['refund-issued.json']);
    const path = join(dir, 'acme-examples', 'refund-issued.json');
    expect(fixtureHeaders('acme', path, TEST_SOURCES)).toEqual({ 'acme-event': 'refund' });
    expect(
      signWebhook(
        'acme',
        { body: readFileSync(path), secret: 'whsec_AAAA', headers: fixtureHeaders('acme', path, TEST_SOURCES) },
        TEST_SOURCES,
      ),
    ).toMatchObject({ 'acme-event': 'refund' });
  });

  test('is unknown to the shipped registry until its line is added', () => {
    expect(() => signWebhook('acme', { body: new Uint8Array(), secret: 'x' })).toThrow(/no signer for source "acme"/);
    expect(examplePayloads(dir, 'acme')).toEqual([]);
  });
});
