import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECIPIENT_MSISDN, standardRoutes } from './support/config';
import { call } from './support/http';
import { allLogs, findLeaks, registeredSecrets, registerSecrets } from './support/logs';
import { waitForFinal } from './support/records';
import { runCli, startRuntime } from './support/runtime';
import { runId, type Scenario, startScenario } from './support/scenario';
import { bearerHeaders, newSecret } from './support/signers';

/**
 * Leaks: no secret value (route secrets, the provider API key, a wrong key that was tried) and no
 * full phone number appears in anything the suite's child processes printed: every runtime of
 * every test file of this run (the sequencer runs this file last) and every CLI command. This file
 * first drives a runtime through the paths that carry numbers and secrets: numbers in payloads,
 * templates and recipients, tokens in query strings, a refused recipient, the SMS service echoing
 * the number and the key in its error, a refused API key, and the `logs` command.
 */

const LITERAL_RECIPIENTS = ['+255 754 111 222', '0765 333 444'];
const BODY_PHONE = '+255 786 555 666';
const CALLER = '0689 777 888';

describe('leaks: secrets and phone numbers stay out of every log line', () => {
  let scenario: Scenario;
  const run = runId();
  const ids: string[] = [];

  beforeAll(async () => {
    scenario = await startScenario({
      label: 'leaks',
      timeoutMs: 2_000,
      env: { RETRY_MAX_ATTEMPTS: '2', RETRY_BASE_DELAY_MS: '200' },
      routes: {
        ...standardRoutes(),
        leaky: {
          source: 'generic',
          secret: 'generic-token',
          recipients: [...LITERAL_RECIPIENTS, '{{ phone }}'],
          // The text itself carries a number: it may go to the SMS service, never to a log.
          template: '{{ tag }} call {{ caller }}',
        },
      },
    });
  });

  afterAll(async () => {
    await scenario?.close();
  });

  async function post(path: string, headers: Record<string, string>, body: unknown): Promise<number> {
    const answer = await call(scenario.runtime.baseUrl, { method: 'POST', path, headers, body: JSON.stringify(body) });
    if (answer.status === 202) ids.push(...(answer.json!['ids'] as string[]));
    return answer.status;
  }

  it('drives a runtime through the paths that carry numbers and secrets', async () => {
    const token = scenario.secrets['generic-token']!;
    const apiKey = scenario.secrets['providerApiKey']!;
    expect(
      await post('/hooks/leaky', bearerHeaders(token), { tag: `leak ${run} 1`, phone: BODY_PHONE, caller: CALLER }),
    ).toBe(202);
    // A landline among the recipients: dropped with a warning that must not quote it.
    expect(
      await post('/hooks/leaky', bearerHeaders(token), { tag: `leak ${run} 2`, phone: '0222 123 456', caller: CALLER }),
    ).toBe(202);
    // The token in the query string (accepted), and another route's secret where it is not accepted.
    expect(
      await post(
        `/hooks/leaky?token=${encodeURIComponent(token)}`,
        { 'content-type': 'application/json' },
        { tag: `leak ${run} 3`, phone: BODY_PHONE, caller: CALLER },
      ),
    ).toBe(202);
    expect(
      await post(
        `/hooks/alerts?token=${encodeURIComponent(scenario.secrets['alerts-token']!)}`,
        { 'content-type': 'application/json' },
        { alerts: [], phone: BODY_PHONE },
      ),
    ).toBe(401);
    // Refused credentials that are near misses of real ones, with numbers in the body.
    expect(
      await post('/hooks/leaky', bearerHeaders(`${token}x`), { tag: 'x', phone: BODY_PHONE, caller: CALLER }),
    ).toBe(401);
    expect(
      await post('/hooks/alerts', bearerHeaders(scenario.secrets['alerts-token']!), {
        phone: BODY_PHONE,
        status: `firing ${CALLER}`,
      }),
    ).toBe(400);
    await waitForFinal(scenario.runtime, ids, 60_000);

    // The SMS service echoes the number and the key in its errors: ambiguous (503) and refused (400).
    scenario.sandbox.injectFault({
      kind: 'status',
      status: 503,
      count: 1,
      error: `upstream failed for ${RECIPIENT_MSISDN} +255 754 111 222 using key ${apiKey}`,
    });
    expect(
      await post('/hooks/leaky', bearerHeaders(token), { tag: `leak ${run} 4`, phone: BODY_PHONE, caller: CALLER }),
    ).toBe(202);
    await waitForFinal(scenario.runtime, ids, 60_000);
    scenario.sandbox.injectFault({
      kind: 'status',
      status: 400,
      count: 1,
      error: `invalid phoneNumbers: 255754111222, 0765333444; key ${apiKey}`,
    });
    expect(
      await post('/hooks/leaky', bearerHeaders(token), { tag: `leak ${run} 5`, phone: BODY_PHONE, caller: CALLER }),
    ).toBe(202);
    const records = await waitForFinal(scenario.runtime, ids, 60_000);
    const states = ids.map((id) => records.get(id)!.state);
    expect(states).toContain('UNKNOWN');
    expect(states).toContain('FAILED');
    expect(states).toContain('SENT');

    // `logs` prints records (masked) through the running runtime.
    const logs = await runCli('logs', ['logs'], scenario.runtime.cliEnv);
    expect(logs.code, logs.output).toBe(0);
    expect(logs.output).toContain('2557****222');
    const json = await runCli('logs-json', ['logs', '--json'], scenario.runtime.cliEnv);
    expect(json.code, json.output).toBe(0);
    expect(json.output).toContain(ids[0]!);

    expect(await scenario.runtime.stop()).toEqual({ code: 0, signal: null });
  });

  it('a refused API key is not printed', async () => {
    const wrongKey = `sbx_${newSecret('token')}`;
    registerSecrets([wrongKey]);
    const runtime = await startRuntime({
      files: scenario.files,
      providerBaseUrl: scenario.sandbox.baseUrl,
      providerApiKey: wrongKey,
      env: { RETRY_MAX_ATTEMPTS: '2', RETRY_BASE_DELAY_MS: '200' },
      label: 'leaks-wrong-key',
    });
    try {
      const answer = await call(runtime.baseUrl, {
        method: 'POST',
        path: '/hooks/leaky',
        headers: bearerHeaders(scenario.secrets['generic-token']!),
        body: JSON.stringify({ tag: `leak ${run} 6`, phone: BODY_PHONE, caller: CALLER }),
      });
      expect(answer.status).toBe(202);
      const id = (answer.json!['ids'] as string[])[0]!;
      const records = await waitForFinal(runtime, [id], 60_000);
      expect(records.get(id)!.state).toBe('FAILED');
      expect(scenario.sandbox.requests().some((request) => request.status === 401)).toBe(true);
    } finally {
      expect(await runtime.stop()).toEqual({ code: 0, signal: null });
    }
  });

  it('finds no secret value and no full phone number in any output of this run', () => {
    const logs = allLogs();
    const secrets = registeredSecrets();
    // Not vacuous: the scan covers runtimes that handled these numbers and knows these secrets.
    expect(logs.size).toBeGreaterThanOrEqual(4);
    expect([...logs.values()].some((text) => text.includes('2557****222'))).toBe(true);
    expect(secrets).toContain(scenario.secrets['providerApiKey']);
    expect(secrets).toContain(scenario.secrets['generic-token']);

    const leaks = findLeaks(logs, secrets);
    const report = leaks.slice(0, 20).map((leak) => `${leak.kind} in ${leak.file}:${leak.line}: ${leak.excerpt}`);
    expect(report).toEqual([]);
  });
});
