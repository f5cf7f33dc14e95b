import { describe, expect, it } from 'vitest';
import { levelAfter, pagingAction } from '../../../../functions/core/paging/incident';

const T0 = new Date('2026-11-30T09:00:00.000Z');
const afterT0 = (minutes: number): Date => new Date(T0.getTime() + minutes * 60_000);
const steps = [{ afterSeconds: 600 }, { afterSeconds: 1800 }] as never;

describe('pagingAction', () => {
  it('walks the steps by their after, then renotifies the last level every `every`, max times', () => {
    const paging = { steps, renotify: { everySeconds: 900, max: 3 } };
    const actions = Array.from({ length: 6 }, (_, index) => pagingAction(paging, T0, index));
    expect(actions).toEqual([
      { kind: 'escalate', step: 0, dueAt: afterT0(10) },
      { kind: 'escalate', step: 1, dueAt: afterT0(30) },
      { kind: 'renotify', step: 1, dueAt: afterT0(45) },
      { kind: 'renotify', step: 1, dueAt: afterT0(60) },
      { kind: 'renotify', step: 1, dueAt: afterT0(75) },
      undefined,
    ]);
    expect([0, 1, 2, 5].map((done) => levelAfter(paging, done))).toEqual([0, 1, 2, 2]);
  });

  it("renotifies the route's own recipients from the first SMS when there are no steps", () => {
    expect(pagingAction({ steps: [], renotify: { everySeconds: 300, max: 1 } }, T0, 0)).toEqual({
      kind: 'renotify',
      step: -1,
      dueAt: afterT0(5),
    });
    expect(pagingAction({ steps: [], renotify: { everySeconds: 300, max: 1 } }, T0, 1)).toBeUndefined();
    expect(pagingAction({ steps: [] }, T0, 0)).toBeUndefined();
  });
});
