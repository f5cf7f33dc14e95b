import { describe, expect, it } from 'vitest';
import type { Attention } from '../../../functions/relay/attention';
import { attentionText, attentionWatch } from '../../../local/runtime/attention-line';

/** The terminal's attention lines: each item said once as it starts or changes, a muted route each on its own line. */

const NOW = new Date('2026-12-04T15:54:00.000Z');

const parked = (count: number): Attention => ({
  kind: 'parked',
  count,
  more: false,
  since: '2026-12-04T15:51:00.000Z',
  what: `${count} SMS parked`,
  why: 'insufficient balance (balance 0 TZS)',
  action: 'Top up, then',
  command: 'run "npx sms-relay redrive --state PARKED"',
  redrive: 'PARKED',
  ids: [],
});

const muted = (route: string, until: string): Attention => ({
  kind: 'muted',
  count: 1,
  more: false,
  since: '2026-12-04T15:00:00.000Z',
  what: `Route ${route} muted`,
  why: 'db upgrade',
  action: 'Its SMS are dropped until then; unmute it when ready:',
  command: `"npx sms-relay unmute ${route}"`,
  redrive: null,
  ids: [],
  route,
  until,
});

describe("the terminal's attention lines", () => {
  it("say what, why, since when and the command, in the viewer's zone", () => {
    expect(attentionText(parked(2), NOW)).toMatch(
      /^2 SMS parked: insufficient balance \(balance 0 TZS\), since \d\d:\d\d \(3 min ago\)\. Top up, then run "npx sms-relay redrive --state PARKED"$/,
    );
    expect(attentionText(muted('alerts', '2026-12-04T16:06:00.000Z'), NOW)).toMatch(
      /^Route alerts muted until \d\d:\d\d \(in 12 min\): db upgrade, since \d\d:\d\d \(54 min ago\)\. Its SMS are dropped until then; unmute it when ready: "npx sms-relay unmute alerts"$/,
    );
  });

  it('say each muted route once, again when its mute changes, and once that nothing waits any more', () => {
    const lines: string[] = [];
    const watch = attentionWatch((line) => lines.push(line.replace(/^\d\d:\d\d:\d\d {2}attention {2}/, '')));
    const later = '2026-12-04T18:00:00.000Z';
    watch([parked(2), muted('alerts', later), muted('orders', later)], NOW);
    watch([parked(2), muted('alerts', later), muted('orders', later)], NOW);
    watch([parked(3), muted('alerts', later), muted('orders', '2026-12-04T20:00:00.000Z')], NOW);
    watch([], NOW);
    expect(lines.map((line) => line.split(/ until |: /)[0])).toEqual([
      '2 SMS parked',
      'Route alerts muted',
      'Route orders muted',
      '3 SMS parked',
      'Route orders muted',
      'nothing waits for a person any more',
    ]);
  });
});
