import { createRequire } from 'node:module';
import * as core from './phone-numbers-library';
import type { MetadataJson } from 'libphonenumber-js/core';
import maxMetadata from 'libphonenumber-js/metadata.max.json';

/**
 * In a Lambda bundle, `infra/bundle.ts` defines these as the paths, relative to the bundle, of
 * `phone-numbers.cjs` (libphonenumber-js's core, bundled on its own) and `phone-metadata.json`
 * (its `metadata.max.json`); running the sources, they are not defined and the package is
 * imported as usual.
 */
declare const SMS_RELAY_PHONE_LIBRARY: string | undefined;
declare const SMS_RELAY_PHONE_METADATA: string | undefined;

/** The functions of libphonenumber-js the relay uses (`phone-numbers-library.ts`); each takes the metadata last. */
export type PhoneNumbersLibrary = typeof import('./phone-numbers-library');

let library: PhoneNumbersLibrary | undefined;
let metadata: MetadataJson | undefined;

// `require` loads the files beside the bundle synchronously, on first use: in `index.mjs` they
// would cost every cold start ~200 KiB of parsing (mostly the metadata object), yet ingest needs
// them only for a config with templated recipients or a phone filter, and the other handlers never.
const requireBeside = (path: string): unknown => createRequire(import.meta.url)(path);

/**
 * libphonenumber-js (`core`), loaded on first use in a bundle.
 *
 * @example
 * ```ts
 * phoneNumbers().parsePhoneNumberFromString('+255 712 345 678', 'TZ', phoneMetadata());
 * ```
 */
export function phoneNumbers(): PhoneNumbersLibrary {
  library ??= typeof SMS_RELAY_PHONE_LIBRARY === 'string' ? (requireBeside(SMS_RELAY_PHONE_LIBRARY) as PhoneNumbersLibrary) : core;
  return library;
}

/**
 * libphonenumber-js's "max" metadata (every country, number types included): the same object
 * `libphonenumber-js/max` passes to these functions. Loaded on first use in a bundle.
 */
export function phoneMetadata(): MetadataJson {
  metadata ??= typeof SMS_RELAY_PHONE_METADATA === 'string' ? (requireBeside(SMS_RELAY_PHONE_METADATA) as MetadataJson) : maxMetadata;
  return metadata;
}

/**
 * Loads both now: what a handler calls during its init when its config will parse phone numbers,
 * so the first webhook does not wait for it.
 */
export function loadPhoneNumbers(): void {
  phoneNumbers();
  phoneMetadata();
}
