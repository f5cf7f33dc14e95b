export const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

export const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/** `true` when `index` falls between the two halves of a surrogate pair. */
export const splitsSurrogatePair = (text: string, index: number): boolean =>
  isLowSurrogate(text.charCodeAt(index)) && isHighSurrogate(text.charCodeAt(index - 1));
