/**
 * What `infra/bundle.ts` bundles as `phone-numbers.cjs` beside each handler: the functions of
 * libphonenumber-js the relay uses (see `phone-numbers.ts`, which loads that file on first use).
 */
export { parsePhoneNumberFromString, validatePhoneNumberLength } from 'libphonenumber-js/core';
