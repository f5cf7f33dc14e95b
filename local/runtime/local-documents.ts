import { readFileSync } from 'node:fs';
import type { SourceFetch } from '../../functions/core/sources/types';
import { invalidSetting } from '../shared/errors';

/** The environment variable naming the file; read only by the local runtime (`npm start`). */
export const LOCAL_DOCUMENTS_ENV = 'RELAY_LOCAL_DOCUMENTS';

/**
 * LOCAL RUNTIME ONLY, for tests: a source-pack fetcher that answers the URLs listed in a JSON file
 * (`{ "<https URL>": "<text a GET of it returns>" }`) from that file, and every other URL from
 * `fallback` (the network). The end-to-end and reliability suites use it to serve a test SNS
 * signing certificate, and a confirmation answer, under SNS URLs. Nothing on AWS reads this
 * variable: the Lambda handlers always use the network, so only a test run of `npm start` can ever
 * trust a certificate that SNS did not serve.
 *
 * @throws {RuntimeError} the file is unreadable or not a JSON object of strings
 *
 * @example
 * ```ts
 * const fetch = localDocumentsFetch('/tmp/e2e/documents.json', defaultSourceFetch);
 * ```
 */
export function localDocumentsFetch(path: string, fallback: SourceFetch): SourceFetch {
  let documents: Record<string, unknown>;
  try {
    documents = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw invalidSetting(LOCAL_DOCUMENTS_ENV, `cannot read ${path} as JSON`, { cause: error });
  }
  if (
    documents === null ||
    typeof documents !== 'object' ||
    Object.values(documents).some((text) => typeof text !== 'string')
  ) {
    throw invalidSetting(LOCAL_DOCUMENTS_ENV, `${path} must be a JSON object of URL to text`);
  }
  const served = new Map(Object.entries(documents as Record<string, string>));
  return async (url) => {
    const text = served.get(url);
    return text === undefined ? await fallback(url) : { status: 200, body: text };
  };
}
