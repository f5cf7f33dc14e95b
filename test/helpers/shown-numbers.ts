/**
 * For tests of what the console shows: which of some phone numbers an answer shows in full, in any
 * spelling a reader could decode (separators, percent and JSON escapes, a base64 string's text).
 */

/** An `hmac` route whose signature header's name lacks "signature", with a signed timestamp and a delivery-id header, as config YAML under `routes:`. */
export function trelloRouteYaml({
  recipients,
  template,
  when,
}: {
  readonly recipients: readonly string[];
  readonly template: string;
  readonly when?: string;
}): string {
  return `
  trello:
    source: hmac
    capture: 1d
    secret: trello-secret
    recipients: ${JSON.stringify(recipients)}
    template: ${JSON.stringify(template)}
${when === undefined ? '' : `    when: ${JSON.stringify(when)}\n`}    signature: { header: x-trello-webhook, algorithm: sha1, encoding: base64, signed: "{timestamp}.{body}" }
    timestamp: { header: x-trello-time }
    dedupe: { header: x-trello-delivery }
`;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4}){4,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Every string in a parsed answer (keys too), and the text of each that is base64. */
function texts(value: unknown): string[] {
  if (typeof value === 'string')
    return BASE64.test(value) ? [value, Buffer.from(value, 'base64').toString('latin1')] : [value];
  if (Array.isArray(value)) return value.flatMap(texts);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => [key, ...texts(item)]);
  return [];
}

/** The digits a reader gets from one text: percent and JSON escapes decoded, everything else dropped. */
function digitsOf(text: string): string {
  return text
    .replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/\\+u([0-9a-f]{4})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/\D/g, '');
}

/** Those of `numbers` (nine national digits each) that a parsed answer shows in full, per string. */
export function shownNumbers(answer: unknown, numbers: readonly string[]): string[] {
  const digits = texts(answer).map(digitsOf);
  return numbers.filter((number) => digits.some((text) => text.includes(number)));
}
