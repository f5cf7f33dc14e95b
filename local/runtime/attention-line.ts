import type { Attention } from '../../functions/relay/attention';
import { formatTime, terminalClock } from '../../functions/core/time-format';

/**
 * The terminal's attention lines: one per thing SMS wait for a person to do, printed when it starts
 * and when it changes (what or how many), never again while it stays the same; and one line when
 * nothing waits any more.
 *
 * @example
 * ```ts
 * const watch = attentionWatch((line) => terminal.print(line));
 * watch(await needsAttention(store, new Date()), new Date());
 * // 14:05:09  attention  8 SMS parked: insufficient balance (balance 0 TZS), since 14:02 (3 min ago). Top up, then run "npx sms-relay redrive --state PARKED"
 * ```
 */
export function attentionWatch(print: (line: string) => void): (items: readonly Attention[], now: Date) => void {
  let shown = new Map<string, string>();
  return (items, now) => {
    // One line per kind, and per route for mutes; said again when its count (or mute) changes.
    const key = (item: Attention): string => `${item.kind} ${item.route ?? ''}`;
    const next = new Map(items.map((item) => [key(item), `${item.what} ${item.until ?? ''}`]));
    for (const item of items)
      if (shown.get(key(item)) !== next.get(key(item)))
        print(`${terminalClock(now)}  attention  ${attentionText(item, now)}`);
    if (items.length === 0 && shown.size > 0)
      print(`${terminalClock(now)}  attention  nothing waits for a person any more`);
    shown = next;
  };
}

/**
 * `8 SMS parked: insufficient balance (balance 0 TZS), since 14:02 (3 min ago). Top up, then run "…"`;
 * `Route alerts muted until 16:00: db upgrade, since 14:00. Its SMS are dropped until then; unmute it when ready: "…"`.
 */
export function attentionText(item: Attention, now: Date): string {
  const until = item.until === undefined ? '' : ` until ${formatTime(item.until, { now })}`;
  const since = item.since === null ? '' : `, since ${formatTime(item.since, { now })}`;
  return `${item.what}${until}: ${item.why}${since}. ${item.action} ${item.command}`;
}
