const DURATION = /^(\d+)\s*(s|m|h|d|w)$/;
const SECONDS_PER_UNIT = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const;

/**
 * Reads a duration written as seconds (`300`) or with a unit (`30s`, `5m`, `1h`, `3d`, `1w`).
 *
 * @example
 * ```ts
 * parseDurationSeconds('5m'); // 300
 * ```
 */
export function parseDurationSeconds(value: number | string): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value > 0 ? value : undefined;
  const match = DURATION.exec(value.trim());
  if (match === null) return undefined;
  const seconds = Number(match[1]) * SECONDS_PER_UNIT[match[2] as keyof typeof SECONDS_PER_UNIT];
  return seconds > 0 ? seconds : undefined;
}
