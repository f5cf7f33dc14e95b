import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Builds the `X-API-Key` check. Both sides are hashed first so the comparison takes the same time
 * whatever the presented key's length or content: timing reveals nothing about the real key.
 *
 * @example
 * const isValidApiKey = createApiKeyCheck('secret');
 * isValidApiKey('secret'); // true
 * isValidApiKey(undefined); // false
 */
export function createApiKeyCheck(apiKey: string): (presented: string | string[] | undefined) => boolean {
  const expectedDigest = digest(apiKey);
  return (presented) => {
    // Node joins a repeated X-API-Key into one string; an array only comes from unusual callers, and is never valid.
    if (typeof presented !== 'string') return false;
    return timingSafeEqual(digest(presented), expectedDigest);
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
