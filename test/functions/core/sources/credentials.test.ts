import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { alertmanager } from '../../../../functions/core/sources/alertmanager';
import { checkCredential } from '../../../../functions/core/sources/auth';
import { generic } from '../../../../functions/core/sources/generic';
import { github } from '../../../../functions/core/sources/github';
import { grafana } from '../../../../functions/core/sources/grafana';
import { routeSecretProblems, secretProblem } from '../../../../functions/core/sources/secret-check';
import { SOURCE_NAMES, sourcePack } from '../../../../functions/core/sources/registry';
import type { SourcePack } from '../../../../functions/core/sources/types';
import { webhookOf } from './helpers';

/**
 * Secrets that once could never match: a Basic password with colons, tokens with inner spaces.
 * Each is now matched exactly, or (where HTTP cannot carry it) refused up front by name.
 */

const BODY = '{"receiver":"sms","status":"firing","alerts":[]}';
const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
const authenticate = (pack: SourcePack, secret: string, authorization: string) =>
  pack.authenticate(webhookOf({ body: BODY, headers: { Authorization: authorization } }), {
    secret,
    toleranceSeconds: 300,
  });

describe('Basic credentials split at the first colon', () => {
  const secret = 'pa:ss:word';
  it.each([alertmanager, grafana, generic])('$name accepts a password that contains colons', (pack) => {
    expect(authenticate(pack, secret, basic('alertmanager', secret))).toEqual({ ok: true });
  });

  it.each([alertmanager, grafana, generic])('$name still accepts a secret that is the whole user:password', (pack) => {
    expect(authenticate(pack, 'relay:pa:ss', basic('relay', 'pa:ss'))).toEqual({ ok: true });
  });

  it.each([alertmanager, grafana, generic])(
    '$name refuses a part of the password, the user alone, or a longer password',
    (pack) => {
      expect(authenticate(pack, secret, basic('alertmanager', 'ss:word')).ok).toBe(false);
      expect(authenticate(pack, secret, basic('pa', 'ss')).ok).toBe(false);
      expect(authenticate(pack, secret, basic(secret, '')).ok).toBe(false);
      expect(authenticate(pack, secret, basic('alertmanager', `${secret}:`)).ok).toBe(false);
    },
  );

  it('accepts a UTF-8 password: Basic credentials are base64 of UTF-8 bytes', () => {
    expect(authenticate(alertmanager, 'pässwörd', basic('am', 'pässwörd'))).toEqual({ ok: true });
  });
});

describe('Bearer tokens are taken exactly as sent', () => {
  it('matches a token with inner spaces and tabs exactly, and not once they are collapsed', () => {
    const secret = 'two  spaces\tand a tab';
    const webhook = (value: string) => webhookOf({ body: BODY, headers: { authorization: value } });
    expect(checkCredential(webhook(`Bearer ${secret}`), secret)).toEqual({ ok: true });
    expect(checkCredential(webhook(`bearer    ${secret}`), secret)).toEqual({ ok: true });
    expect(checkCredential(webhook('Bearer two spaces and a tab'), secret).ok).toBe(false);
  });

  it('refuses a bare scheme and an unknown one', () => {
    expect(checkCredential(webhookOf({ headers: { authorization: 'Bearer' } }), 'x').ok).toBe(false);
    expect(checkCredential(webhookOf({ headers: { authorization: 'Token x' } }), 'x')).toEqual({
      ok: false,
      reason: 'unsupported Authorization scheme; use Bearer or Basic',
    });
  });
});

describe('secrets used only as an HMAC key match whatever they contain', () => {
  it.each([' leading space', 'trailing space ', 'inner  spaces', 'pässwörd 🔑', 'tab\tinside'])(
    'github with %j',
    (secret) => {
      const body = '{"zen":"Keep it logically awesome."}';
      const headers = { 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` };
      expect(github.authenticate(webhookOf({ body, headers }), { secret, toleranceSeconds: 300 })).toEqual({
        ok: true,
      });
      expect(secretProblem(sourcePack('github'), secret)).toBeUndefined();
      expect(secretProblem(sourcePack('hmac'), secret)).toBeUndefined();
    },
  );
});

describe('secretProblem: secrets a credential header cannot carry are refused, by name', () => {
  it.each(['alertmanager', 'grafana', 'generic'] as const)('%s', (source) => {
    expect(secretProblem(sourcePack(source), 'plain-token_1.2~x')).toBeUndefined();
    expect(secretProblem(sourcePack(source), 'inner spaces are fine')).toBeUndefined();
    expect(secretProblem(sourcePack(source), 'pässwörd')).toMatch(/^has non-ASCII characters/);
    expect(secretProblem(sourcePack(source), 'tab\there')).toMatch(/^has control characters/);
    expect(secretProblem(sourcePack(source), 'line\nbreak')).toMatch(/^has control characters/);
    expect(secretProblem(sourcePack(source), ' token')).toMatch(/^starts or ends with a space/);
    expect(secretProblem(sourcePack(source), 'token ')).toMatch(/^starts or ends with a space/);
  });

  it.each(SOURCE_NAMES)(
    'checks the characters of a %s secret only when the source sends it as a credential (a header)',
    (source) => {
      const pack = sourcePack(source);
      const problem = secretProblem(pack, 'pässwörd');
      if (pack.secretKind === 'credential') expect(problem).toMatch(/^has non-ASCII characters/);
      else expect(problem).toBeUndefined();
    },
  );

  it('refuses an empty secret for every source', () => {
    for (const source of SOURCE_NAMES) expect(secretProblem(sourcePack(source), ''), source).toMatch(/^is empty/);
  });

  it('names each unusable or missing secret by its name and route, never its value', () => {
    const routes = [
      { id: 'alerts', pack: sourcePack('alertmanager'), config: { secret: 'alerts-token' } },
      { id: 'github', pack: sourcePack('github'), config: { secret: 'github-secret' } },
      { id: 'notify', pack: sourcePack('generic'), config: { secret: 'generic-token' } },
      { id: 'ops', pack: sourcePack('generic'), config: { secret: 'ops-token' } },
    ];
    const values = {
      'alerts-token': 'Schlüssel-42',
      'github-secret': ' any key ',
      'generic-token': 'fine-token',
      constructor: 'x',
    };
    const problems = routeSecretProblems(routes, values);
    expect(problems).toEqual([
      expect.stringMatching(/^secret "alerts-token" \(route alerts\): has non-ASCII characters/),
      'secret "ops-token" (route ops): is missing: add a value with this name',
    ]);
    expect(problems.join('\n')).not.toContain('Schlüssel');
  });
});
