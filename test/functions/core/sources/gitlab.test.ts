import { describe, expect, it } from 'vitest';
import { BadPayloadError } from '../../../../functions/core/sources/errors';
import { GITLAB, gitlab } from '../../../../functions/core/sources/gitlab';
import type { AuthContext } from '../../../../functions/core/sources/types';
import { webhookOf } from './helpers';
import { fixtureBytes, fixtureJson, GSM_PRINTABLE, renderDefault } from './pack-helpers';

const SECRET = 'glwht-7c1e0a93d4b25f68';
const context: AuthContext = { secret: SECRET, toleranceSeconds: 300 };
const IDEMPOTENCY_KEY = '908a6d9e-45fd-46c8-97e6-c4f350f219dd';

const delivery = (body: Uint8Array | string, headers: Record<string, string> = {}) =>
  webhookOf({
    body,
    headers: {
      'Content-Type': 'application/json',
      'X-Gitlab-Event': 'Push Hook',
      'X-Gitlab-Token': SECRET,
      'Idempotency-Key': IDEMPOTENCY_KEY,
      'X-Gitlab-Webhook-UUID': crypto.randomUUID(),
      'X-Gitlab-Event-UUID': crypto.randomUUID(),
      ...headers,
    },
  });

describe('gitlab.authenticate', () => {
  const push = fixtureBytes('gitlab/push.json');

  it('accepts the secret token in X-Gitlab-Token', () => {
    expect(gitlab.authenticate(delivery(push), context)).toEqual({ ok: true });
  });

  it('refuses another token without echoing either', () => {
    const outcome = gitlab.authenticate(delivery(push, { 'X-Gitlab-Token': 'guessed-token' }), context);
    expect(outcome).toEqual({ ok: false, reason: 'X-Gitlab-Token does not match' });
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
  });

  it.each([
    ['a prefix of the secret', SECRET.slice(0, -1)],
    ['the secret with more after it', `${SECRET}x`],
    ['the secret as a Bearer credential', `Bearer ${SECRET}`],
  ])('refuses %s', (_case, token) => {
    expect(gitlab.authenticate(delivery(push, { 'X-Gitlab-Token': token }), context).ok).toBe(false);
  });

  it('refuses a missing token, even with the secret elsewhere', () => {
    const webhook = webhookOf({
      body: push,
      headers: { 'X-Gitlab-Event': 'Push Hook', Authorization: `Bearer ${SECRET}` },
      query: { token: SECRET },
    });
    expect(gitlab.authenticate(webhook, context)).toEqual({ ok: false, reason: 'missing X-Gitlab-Token header' });
  });

  it('fails closed when the route has an empty secret', () => {
    expect(
      gitlab.authenticate(delivery(push, { 'X-Gitlab-Token': '' }), { secret: '', toleranceSeconds: 300 }),
    ).toEqual({
      ok: false,
      reason: 'no secret is configured for this route',
    });
  });
});

describe('gitlab.parse and ping', () => {
  it('parses the JSON body and has no ping: the Test button sends a real-looking event', () => {
    const webhook = delivery(fixtureBytes('gitlab/push.json'));
    const body = gitlab.parse(webhook);
    expect(body).toMatchObject({ object_kind: 'push', total_commits_count: 2 });
    expect(gitlab.ping(body, webhook)).toBeUndefined();
  });

  it('refuses a body that is not JSON', () => {
    expect(() => gitlab.parse(delivery('object_kind=push'))).toThrow(BadPayloadError);
  });
});

describe('gitlab.dedupe', () => {
  const push = fixtureBytes('gitlab/push.json');

  it('keys on Idempotency-Key, which GitLab keeps for the retries of one delivery', () => {
    const first = delivery(push);
    // A retry: same key, fresh X-Gitlab-Webhook-UUID and X-Gitlab-Event-UUID.
    const retry = delivery(push);
    expect(gitlab.dedupe(gitlab.parse(first), first)).toEqual({
      key: `gitlab:idempotency:${IDEMPOTENCY_KEY}`,
      windowSeconds: 72 * 3600,
    });
    expect(gitlab.dedupe(gitlab.parse(retry), retry).key).toBe(gitlab.dedupe(gitlab.parse(first), first).key);
  });

  it('ignores X-Gitlab-Event-UUID, which distinct events of one webhook-triggered chain share', () => {
    const shared = { 'X-Gitlab-Event-UUID': '4b2b3a3b-4a3c-4d4e-9f5f-6a6b7c8d9e0f' };
    const one = delivery(push, { ...shared, 'Idempotency-Key': 'a' });
    const other = delivery(fixtureBytes('gitlab/pipeline-failed.json'), { ...shared, 'Idempotency-Key': 'b' });
    expect(gitlab.dedupe(undefined, one).key).not.toBe(gitlab.dedupe(undefined, other).key);
  });

  it('falls back to a hash of the body without an Idempotency-Key (GitLab before 17.4)', () => {
    const webhook = webhookOf({ body: push, headers: { 'X-Gitlab-Token': SECRET } });
    const key = gitlab.dedupe(undefined, webhook).key;
    expect(key).toMatch(/^gitlab:body:[0-9a-f]{64}$/);
    expect(gitlab.dedupe(undefined, webhookOf({ body: push })).key).toBe(key);
    expect(gitlab.dedupe(undefined, webhookOf({ body: fixtureBytes('gitlab/pipeline-failed.json') })).key).not.toBe(
      key,
    );
    expect(GITLAB.dedupeWindowSeconds).toBe(259_200);
  });
});

describe('gitlab.defaultTemplate', () => {
  it('summarises a push', () => {
    expect(renderDefault(gitlab, fixtureJson('gitlab/push.json'))).toBe(
      '[kilimo-labs/sms-relay] Amina Mushi pushed 2 commit(s) to main',
    );
  });

  it('says merged for a merged merge request', () => {
    expect(renderDefault(gitlab, fixtureJson('gitlab/merge_request-merged.json'))).toBe(
      '[kilimo-labs/sms-relay] MR !42 merged by Juma Kassim: Add PagerDuty pack',
    );
  });

  it('summarises a failed pipeline', () => {
    expect(renderDefault(gitlab, fixtureJson('gitlab/pipeline-failed.json'))).toBe(
      '[kilimo-labs/sms-relay] Pipeline #1187 failed on main (Amina Mushi)',
    );
  });

  it('summarises an opened issue and a pushed tag', () => {
    const issue = {
      object_kind: 'issue',
      user: { name: 'Neema Joseph' },
      project: { path_with_namespace: 'kilimo-labs/sms-relay' },
      object_attributes: { iid: 23, title: 'Balance SMS sent twice', action: 'open' },
    };
    expect(renderDefault(gitlab, issue)).toBe(
      '[kilimo-labs/sms-relay] Issue #23 opened by Neema Joseph: Balance SMS sent twice',
    );
    const tag = {
      object_kind: 'tag_push',
      ref: 'refs/tags/v1.4.0',
      checkout_sha: '82b3d5ae',
      user_name: 'Amina Mushi',
      project: { path_with_namespace: 'kilimo-labs/sms-relay' },
    };
    expect(renderDefault(gitlab, tag)).toBe('[kilimo-labs/sms-relay] Amina Mushi pushed tag v1.4.0');
  });

  it('names any other event by its X-Gitlab-Event header', () => {
    const note = {
      object_kind: 'note',
      user: { name: 'Neema Joseph' },
      project: { path_with_namespace: 'kilimo-labs/sms-relay' },
      object_attributes: { action: 'create' },
    };
    expect(renderDefault(gitlab, note, { 'x-gitlab-event': 'Note Hook' })).toBe(
      '[kilimo-labs/sms-relay] Note Hook create by Neema Joseph',
    );
  });

  it('stays one line of GSM characters', () => {
    for (const file of ['gitlab/push.json', 'gitlab/merge_request-merged.json', 'gitlab/pipeline-failed.json']) {
      expect(renderDefault(gitlab, fixtureJson(file))).toMatch(GSM_PRINTABLE);
    }
    expect(gitlab.description).not.toContain('\n');
  });
});
