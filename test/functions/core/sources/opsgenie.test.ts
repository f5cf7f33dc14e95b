import { describe, expect, it } from 'vitest';
import { BadPayloadError } from '../../../../functions/core/sources/errors';
import { OPSGENIE, opsgenie } from '../../../../functions/core/sources/opsgenie';
import type { AuthContext } from '../../../../functions/core/sources/types';
import { webhookOf } from './helpers';
import { fixtureBytes, fixtureJson, renderDefault } from './pack-helpers';

const KEY = 'b7d1c6e2-4f0a-4c39-9d2e-5a8f0b3c1e77';
const context: AuthContext = { secret: KEY, toleranceSeconds: 300 };

const request = (body: Uint8Array | string, headers: Record<string, string> = { Authorization: `GenieKey ${KEY}` }) =>
  webhookOf({ body, headers: { 'Content-Type': 'application/json', ...headers } });

describe('opsgenie.authenticate', () => {
  const create = fixtureBytes('opsgenie/create.json');

  it('accepts Authorization: GenieKey <key>, the scheme in any case, as its own sign writes it', () => {
    expect(opsgenie.authenticate(request(create), context)).toEqual({ ok: true });
    expect(opsgenie.authenticate(request(create, { Authorization: `geniekey ${KEY}` }), context)).toEqual({ ok: true });
    const signed = opsgenie.sign({ body: create, secret: KEY });
    expect(opsgenie.authenticate(request(create, signed), context)).toEqual({ ok: true });
  });

  it('refuses a wrong key, another scheme or none, without echoing the key', () => {
    const wrong = opsgenie.authenticate(request(create, { Authorization: 'GenieKey guessed' }), context);
    expect(wrong).toEqual({ ok: false, reason: 'GenieKey does not match' });
    expect(opsgenie.authenticate(request(create, { Authorization: `Bearer ${KEY}` }), context)).toEqual({
      ok: false,
      reason: 'unsupported Authorization scheme; use GenieKey',
    });
    expect(opsgenie.authenticate(request(create, {}), context).ok).toBe(false);
    expect(opsgenie.authenticate(request(create, { Authorization: `GenieKey ${KEY}x` }), context).ok).toBe(false);
    expect(JSON.stringify(wrong)).not.toContain(KEY);
  });

  it('fails closed when the route has an empty secret', () => {
    expect(opsgenie.authenticate(request(create, { Authorization: 'GenieKey ' }), { ...context, secret: '' }).ok).toBe(
      false,
    );
  });
});

describe('opsgenie.parse', () => {
  it('reads a create alert request', () => {
    expect(opsgenie.parse(request(fixtureBytes('opsgenie/create.json')))).toEqual(fixtureJson('opsgenie/create.json'));
  });

  it.each([
    ['not JSON', 'message=disk', /not valid JSON/],
    ['an array', '[{"message":"disk"}]', /JSON object/],
    ['no message', '{"alias":"a"}', /^Message can not be empty/],
    ['an empty message', '{"message":"  "}', /^Message can not be empty/],
    ['a message of another type', '{"message":42}', /"message" must be a string/],
    ['tags not a list', '{"message":"m","tags":"a,b"}', /"tags" must be a array/],
    ['details not an object', '{"message":"m","details":["a"]}', /"details" must be a object/],
    ['an unknown priority', '{"message":"m","priority":"P9"}', /priority/],
  ])('refuses %s', (_case, body, reason) => {
    expect(() => opsgenie.parse(request(body))).toThrow(BadPayloadError);
    expect(() => opsgenie.parse(request(body))).toThrow(reason);
  });
});

describe('opsgenie.defaultTemplate', () => {
  it('reads [<priority>] <message>, P3 when the create names none (Opsgenie\u2019s default)', () => {
    expect(renderDefault(opsgenie, fixtureJson('opsgenie/create.json'))).toBe(
      '[P1] DiskAlmostFull: /var/lib/postgresql on db-01 has 6% space left',
    );
    expect(renderDefault(opsgenie, { message: 'Backup failed' })).toBe('[P3] Backup failed');
  });
});

describe('opsgenie.dedupe', () => {
  it("catches a create's retries by its body, for a minute only", () => {
    const body = fixtureBytes('opsgenie/create.json');
    const first = opsgenie.dedupe(opsgenie.parse(request(body)), request(body));
    expect(first).toEqual({ key: expect.stringMatching(/^opsgenie:create:[0-9a-f]{64}$/), windowSeconds: 60 });
    expect(opsgenie.dedupe({}, request(body)).key).toBe(first.key);
    expect(opsgenie.dedupe({}, request('{"message":"other"}')).key).not.toBe(first.key);
    expect(OPSGENIE.dedupeWindowSeconds).toBe(60);
  });
});
