import { readFileSync } from 'node:fs';
import { parseJson } from '../../../../functions/core/sources/body';
import type { SourcePack, WebhookBody } from '../../../../functions/core/sources/types';
import { buildScope, createTemplateEngine } from '../../../../functions/core/templates';

const FIXTURES = new URL('../../../../examples/', import.meta.url);

/** A fixture's bytes exactly as stored: the raw body a sender would have signed. */
export function fixtureBytes(path: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(path, FIXTURES)));
}

/** A fixture parsed the way the relay parses bodies (big integers kept as exact strings). */
export function fixtureJson(path: string): Record<string, unknown> {
  return parseJson(readFileSync(new URL(path, FIXTURES), 'utf8')) as Record<string, unknown>;
}

/** Renders a pack's `defaultTemplate` with the relay's real engine (its SMS filters, default options). */
export function renderDefault(
  pack: SourcePack,
  body: WebhookBody,
  headers: Readonly<Record<string, string>> = {},
): string {
  const engine = createTemplateEngine();
  return engine.render(engine.compileTemplate(pack.defaultTemplate), buildScope({ body, headers })).text;
}

/** Printable GSM 03.38 characters (basic set, plus `[` `]` from its extension): one line, no switch to UCS-2. */
export const GSM_PRINTABLE = /^[A-Za-z0-9 @$_!"#%&'()*+,\-./:;<=>?[\]]*$/;
