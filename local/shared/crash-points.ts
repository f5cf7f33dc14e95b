import { AcceptOutcome, type MessageStore, NoticeKind } from '../../functions/store';

/**
 * Tests only (`RELAY_CRASH_AT`): moments at which the local runtime kills itself with SIGKILL, right
 * after the store answered the write that makes the moment, as a power cut or `kill -9` would. A
 * test can then restart on the same data dir and show what survived, with no race against a kill
 * sent from outside.
 */
export const CrashPoint = {
  /** The low-balance alert was disarmed (`updateBalanceState` answered `alert: true`). */
  BalanceDisarmed: 'balance-disarmed',
  /** A low-balance notice was recorded (`recordNotice` of a `low-balance` notice accepted). */
  LowBalanceRecorded: 'low-balance-recorded',
} as const;
export type CrashPoint = (typeof CrashPoint)[keyof typeof CrashPoint];

const POINTS: ReadonlySet<string> = new Set(Object.values(CrashPoint));

/** Whether `value` names a crash point. */
export function isCrashPoint(value: string): value is CrashPoint {
  return POINTS.has(value);
}

const crash = (): never => {
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL to oneself ends the process before this line; should it not, nothing may run on.
  throw new Error('crash point reached');
};

/**
 * The store, killing this process at `point` (see {@link CrashPoint}); the store itself without one.
 *
 * @example
 * ```ts
 * const store = withCrashPoint(local.store, settings.crashAt);
 * ```
 */
export function withCrashPoint(store: MessageStore, point: CrashPoint | undefined): MessageStore {
  if (point === CrashPoint.BalanceDisarmed) {
    return {
      ...store,
      updateBalanceState: async (observation) => {
        const update = await store.updateBalanceState(observation);
        return update.alert ? crash() : update;
      },
    };
  }
  if (point === CrashPoint.LowBalanceRecorded) {
    return {
      ...store,
      recordNotice: async (input) => {
        const result = await store.recordNotice(input);
        return input.kind === NoticeKind.LowBalance && result.outcome === AcceptOutcome.Accepted ? crash() : result;
      },
    };
  }
  return store;
}
