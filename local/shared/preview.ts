import type { CompiledRoute } from '../../functions/core/config/load';
import { evaluateWebhook } from '../../functions/core/pipeline/evaluate';

/** What `preview` prints, and what the console's template playground shows: one evaluation for both. */
export interface PreviewResult {
  readonly verdict: string;
  readonly reason?: string;
  readonly dedupeKey: string | null;
  readonly messages: readonly {
    readonly to: readonly string[];
    readonly text: string;
    readonly senderId: string | null;
    readonly encoding: string;
    readonly characters: number;
    readonly segments: number;
    /** Present when the alert asks for the credit reserve on a normal route (Opsgenie's P1, P2): it may spend `balance.reserve` and takes the critical lane. */
    readonly critical?: true;
  }[];
  readonly dropped: readonly { readonly entry: string; readonly reason: string }[];
  readonly warnings: readonly string[];
}

/**
 * Evaluates a payload on a compiled route exactly as ingest would (same sources, templates,
 * recipients and fitting), recording nothing. Without `secret` the payload is not authenticated;
 * `query` is the query string of the URL it was posted to (`{{ query.to }}`).
 *
 * @example
 * ```ts
 * previewEvaluation(route, body, { 'content-type': 'application/json' }).messages[0]?.segments; // 1
 * ```
 */
export function previewEvaluation(
  route: CompiledRoute,
  body: Uint8Array,
  headers: Record<string, string>,
  secret?: string,
  query: Readonly<Record<string, string>> = {},
): PreviewResult {
  const evaluation = evaluateWebhook(
    route,
    { body, headers, query, receivedAt: new Date() },
    { secret, trackMissing: true },
  );
  return {
    verdict: evaluation.verdict,
    ...(evaluation.reason === undefined ? {} : { reason: evaluation.reason }),
    dedupeKey: evaluation.dedupeKey ?? null,
    messages: evaluation.messages.map(({ to, text, senderId, encoding, characters, segments, critical }) => ({
      to,
      text,
      senderId: senderId ?? null,
      encoding,
      characters,
      segments,
      ...(critical === true ? { critical } : {}),
    })),
    dropped: [
      ...evaluation.dropped.map(({ entry, reason }) => ({ entry, reason })),
      ...evaluation.skipped
        .filter((skip) => skip.verdict === 'dropped')
        .map(({ item, reason }) => ({ entry: `item ${item}`, reason })),
    ],
    warnings: evaluation.warnings,
  };
}

/** Whether a body reads as a form (`a=1&b=2`) rather than JSON: the content type `preview` assumes when none is given. */
export function looksFormEncoded(body: Uint8Array): boolean {
  const start = Buffer.from(body.subarray(0, 64)).toString('utf8').trimStart();
  return !start.startsWith('{') && !start.startsWith('[') && /^[\w.-]+=/.test(start);
}
