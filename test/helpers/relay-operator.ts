import { readAnnouncement } from '../../local/shared/discovery';

/**
 * The header a running relay's `/_relay` endpoints require, as `sms-relay logs` and `redrive`
 * send it: `Authorization: Bearer <consoleSecret>` of the `runtime.json` in its data directory,
 * which its `/health` names. Read afresh each time: a restarted runtime has a new secret.
 *
 * @example
 * ```ts
 * await fetch(`${relay.url}/_relay/records`, { headers: await operatorHeaders(relay.url) });
 * ```
 */
export async function operatorHeaders(
  relayUrl: string,
  { host }: { readonly host?: string } = {},
): Promise<Record<string, string>> {
  const response = await fetch(`${relayUrl}/health`, host === undefined ? {} : { headers: { host } });
  const health = (await response.json()) as { store?: { dataDir?: string } };
  const dataDir = health.store?.dataDir;
  const secret = dataDir === undefined ? undefined : readAnnouncement(dataDir)?.consoleSecret;
  if (secret === undefined)
    throw new Error(`the relay at ${relayUrl} announces no secret (its /health answered ${response.status})`);
  return { authorization: `Bearer ${secret}` };
}
