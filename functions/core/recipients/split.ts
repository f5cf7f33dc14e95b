/**
 * What separates numbers inside one entry: commas, semicolons and line breaks. Spaces don't,
 * because people write numbers with them (`0712 345 678`).
 */
export const RECIPIENT_SEPARATORS = /[,;\r\n]+/;

/** The non-blank pieces of an entry, trimmed. */
export const splitNumbers = (text: string): string[] =>
  text
    .split(RECIPIENT_SEPARATORS)
    .map((piece) => piece.trim())
    .filter((piece) => piece !== '');
