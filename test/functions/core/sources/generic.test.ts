import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BadPayloadError } from '../../../../functions/core/sources/errors';
import { generic } from '../../../../functions/core/sources/generic';
import { webhookOf } from './helpers';
import { GSM_PRINTABLE, renderDefault } from './pack-helpers';

const SECRET = 'generic-test-token-93b1c07e';
const CONTEXT = { secret: SECRET, toleranceSeconds: 300 } as const;
const BODY = readFileSync(new URL('../../../../examples/generic/backup-failed.json', import.meta.url), 'utf8');

describe('generic.authenticate', () => {
  it('accepts Authorization: Bearer <token>', () => {
    expect(
      generic.authenticate(webhookOf({ body: BODY, headers: { Authorization: `Bearer ${SECRET}` } }), CONTEXT),
    ).toEqual({ ok: true });
  });

  it('accepts basic auth whose password is the token', () => {
    const credential = Buffer.from(`relay:${SECRET}`).toString('base64');
    expect(
      generic.authenticate(webhookOf({ body: BODY, headers: { Authorization: `Basic ${credential}` } }), CONTEXT),
    ).toEqual({ ok: true });
  });

  it('accepts ?token= for senders that cannot set headers', () => {
    expect(generic.authenticate(webhookOf({ body: BODY, query: { token: SECRET } }), CONTEXT)).toEqual({ ok: true });
  });

  it('refuses a wrong Bearer token without echoing either token', () => {
    const outcome = generic.authenticate(
      webhookOf({ body: BODY, headers: { Authorization: 'Bearer guessed-token' } }),
      CONTEXT,
    );
    expect(outcome.ok).toBe(false);
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
    expect(JSON.stringify(outcome)).not.toContain('guessed-token');
  });

  it('refuses a wrong token query parameter', () => {
    expect(generic.authenticate(webhookOf({ body: BODY, query: { token: `${SECRET}0` } }), CONTEXT).ok).toBe(false);
    expect(generic.authenticate(webhookOf({ body: BODY, query: { token: '' } }), CONTEXT).ok).toBe(false);
  });

  it('accepts a right token query parameter beside an Authorization header meant for something else', () => {
    const webhook = webhookOf({
      body: BODY,
      headers: { Authorization: 'Bearer proxy-token' },
      query: { token: SECRET },
    });
    expect(generic.authenticate(webhook, CONTEXT)).toEqual({ ok: true });
  });

  it('refuses when both the header and the query parameter are wrong', () => {
    const webhook = webhookOf({ body: BODY, headers: { Authorization: 'Bearer a' }, query: { token: 'b' } });
    expect(generic.authenticate(webhook, CONTEXT).ok).toBe(false);
  });

  it('refuses a request with no credential, saying how to send one', () => {
    expect(generic.authenticate(webhookOf({ body: BODY }), CONTEXT)).toEqual({
      ok: false,
      reason: expect.stringContaining('Bearer'),
    });
  });

  it('refuses everything when the route secret is empty', () => {
    expect(
      generic.authenticate(webhookOf({ body: BODY, headers: { Authorization: 'Bearer ' } }), { ...CONTEXT, secret: '' })
        .ok,
    ).toBe(false);
    expect(generic.authenticate(webhookOf({ body: BODY, query: { token: '' } }), { ...CONTEXT, secret: '' }).ok).toBe(
      false,
    );
  });
});

describe('generic.parse', () => {
  it('parses the fixture, keeping its integer beyond 2^53 exact', () => {
    const body = generic.parse(webhookOf({ body: BODY, headers: { 'Content-Type': 'application/json' } })) as {
      message: string;
      job: { id: unknown; exit_code: unknown };
    };
    expect(body.message).toMatch(/^Nightly backup/);
    expect(body.job.id).toBe('820982911946154508');
    expect(body.job.exit_code).toBe(3);
  });

  it('keeps a top-level big integer exact', () => {
    expect(generic.parse(webhookOf({ body: '{"id": 820982911946154508}' }))).toEqual({ id: '820982911946154508' });
  });

  it('accepts any JSON value, not only objects', () => {
    expect(generic.parse(webhookOf({ body: '["disk", "full"]' }))).toEqual(['disk', 'full']);
    expect(generic.parse(webhookOf({ body: '"ping"' }))).toBe('ping');
  });

  it('turns a form-encoded body into its fields', () => {
    const webhook = webhookOf({
      body: 'message=Gate+opened&zone=north%20yard&phone=0712345678',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' },
    });
    expect(generic.parse(webhook)).toEqual({ message: 'Gate opened', zone: 'north yard', phone: '0712345678' });
  });

  it('refuses a body that is not JSON', () => {
    expect(() => generic.parse(webhookOf({ body: 'message=hello' }))).toThrow(BadPayloadError);
    expect(() => generic.parse(webhookOf({ body: '' }))).toThrow(BadPayloadError);
  });
});

describe('generic.dedupe', () => {
  it('keys on Idempotency-Key when the sender gives one, whatever the body', () => {
    const first = webhookOf({ body: BODY, headers: { 'Idempotency-Key': 'backup-2025-11-21' } });
    const retry = webhookOf({ body: BODY.replace('742', '743'), headers: { 'Idempotency-Key': 'backup-2025-11-21' } });
    const key = generic.dedupe(undefined, first);
    expect(key).toEqual({ key: 'generic:idempotency:backup-2025-11-21', windowSeconds: 86_400 });
    expect(generic.dedupe(undefined, retry)).toEqual(key);
  });

  it('gives the same body under two Idempotency-Keys two keys', () => {
    const one = generic.dedupe(undefined, webhookOf({ body: BODY, headers: { 'Idempotency-Key': 'a' } }));
    const two = generic.dedupe(undefined, webhookOf({ body: BODY, headers: { 'Idempotency-Key': 'b' } }));
    expect(one.key).not.toBe(two.key);
  });

  it('falls back on a hash of the raw body, with a shorter window', () => {
    const key = generic.dedupe(undefined, webhookOf({ body: BODY }));
    expect(key.key).toMatch(/^generic:body:[0-9a-f]{64}$/);
    expect(key.windowSeconds).toBe(600);
    expect(generic.dedupe(undefined, webhookOf({ body: BODY }))).toEqual(key);
    expect(generic.dedupe(undefined, webhookOf({ body: BODY.replace('742', '743') })).key).not.toBe(key.key);
  });
});

describe('generic pack', () => {
  it('has no ping', () => {
    const webhook = webhookOf({ body: BODY });
    expect(generic.ping(generic.parse(webhook), webhook)).toBeUndefined();
  });

  it("renders the body's message with the default template", () => {
    const text = renderDefault(generic, generic.parse(webhookOf({ body: BODY })));
    expect(text).toBe('Nightly backup of nas-01 failed: repository quota exceeded');
    expect(text).toMatch(GSM_PRINTABLE);
  });

  it('falls back through text, summary and title, then a fixed line', () => {
    expect(renderDefault(generic, { text: 'Gate opened', title: 'Gate' })).toBe('Gate opened');
    expect(renderDefault(generic, { title: 'Gate' })).toBe('Gate');
    expect(renderDefault(generic, { level: 3 })).toBe('Webhook received');
    expect(renderDefault(generic, ['not', 'an', 'object'])).toBe('Webhook received');
  });

  it('has a name, a description and a default template', () => {
    expect(generic.name).toBe('generic');
    expect(generic.description.trim()).not.toBe('');
    expect(generic.defaultTemplate.trim()).not.toBe('');
  });
});
