/**
 * Tests only (`RELAY_CRASH_AT`): moments at which the local runtime kills itself with SIGKILL, right
 * after the store answered the write that makes the moment, as a power cut or `kill -9` would. A
 * test can then restart on the same data dir and show what survived, with no race against a kill
 * sent from outside. The store that kills is `withCrashPoint` (`local/runtime/crash-store.ts`): the names
 * here load no store, since the settings read them.
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
