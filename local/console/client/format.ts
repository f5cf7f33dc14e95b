/** Formatting shared by the pages. Everything returns plain text (rendered as text nodes). */

const pad = (n: number): string => String(n).padStart(2, '0');

function valid(iso: string | null | undefined): Date | null {
  if (!iso) return null;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** Local time: `14:02:11` today, `03-01 14:02:11` this year, `2025-03-01 14:02` before. */
export function shortTime(iso: string | null | undefined, now = new Date()): string {
  const date = valid(iso);
  if (!date) return iso ?? '—';
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  if (date.toDateString() === now.toDateString()) return time;
  const day = `${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  if (date.getFullYear() === now.getFullYear()) return `${day} ${time}`;
  return `${date.getFullYear()}-${day} ${time.slice(0, 5)}`;
}

/** Local date and time, always complete: `2025-03-01 14:02:11`. */
export function fullTime(iso: string | null | undefined): string {
  const date = valid(iso);
  if (!date) return iso ?? '—';
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** `3 min ago`, `2 h ago`, `5 d ago`. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  const date = valid(iso);
  if (!date) return 'never';
  const seconds = Math.round((now - date.getTime()) / 1000);
  if (seconds < 0) return 'in the future';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

/** First two masked numbers, then `+N` for the rest. */
export function recipients(to: readonly string[]): string {
  if (to.length === 0) return '—';
  const shown = to.slice(0, 2).join(', ');
  return to.length > 2 ? `${shown} +${to.length - 2}` : shown;
}

export function num(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return value.toLocaleString(undefined, { maximumFractionDigits: digits });
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
