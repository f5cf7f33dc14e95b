/**
 * Matches the ids the store makes (`newId` in `ids.ts`): 26 characters of Crockford base32, the
 * ULID layout. Apart from `ids.ts` so that the console's page can check an id without `node:crypto`.
 */
export const ID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;
