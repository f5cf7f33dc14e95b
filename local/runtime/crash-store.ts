import { AcceptOutcome, type MessageStore, NoticeKind } from '../../functions/store';
import { CrashPoint } from '../shared/crash-points';

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
