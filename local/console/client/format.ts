/** Formatting shared by the pages. Everything returns plain text (rendered as text nodes). */

/** First two masked numbers, then `+N` for the rest. */
export function recipients(to: readonly string[]): string {
  if (to.length === 0) return '—';
  const shown = to.slice(0, 2).join(', ');
  return to.length > 2 ? `${shown} +${to.length - 2}` : shown;
}

/** One formatter per number of digits: `toLocaleString` with options builds one at each call. */
const numberFormats = new Map<number, Intl.NumberFormat>();

export function num(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  let format = numberFormats.get(digits);
  if (format === undefined) {
    format = new Intl.NumberFormat(undefined, { maximumFractionDigits: digits });
    numberFormats.set(digits, format);
  }
  return format.format(value);
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** `30m`, `1d`… from seconds, as the config writes durations. */
export function duration(seconds: number): string {
  if (seconds % 86400 === 0) return `${seconds / 86400}d`;
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/** The body pretty-printed when it is JSON, else null. */
export function prettyJson(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return null;
  try {
    return JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    return null;
  }
}
