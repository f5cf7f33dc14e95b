/** The alarm thresholds the runbook in docs/deploying.md documents. */
export const ALARM_THRESHOLDS = {
  /** Stream records waiting longer than this (ms) at the sender: the stream is stalling. */
  iteratorAgeMs: 60_000,
  /** The oldest due PENDING record waiting longer than this (seconds): the sweeper is not draining. */
  pendingAgeSeconds: 300,
  /** Refused webhooks on one route within one hour: a rarely-called sender with a wrong secret still trips it. */
  rejectedPerHour: 2,
  /**
   * Minutes running without a sweep before `SweeperNotRunning` fires (the sweep runs each minute):
   * 1-minute periods, all of them missing, so one sweep that slips into the next minute does not page.
   */
  sweeperSilentMinutes: 3,
  /** A throttle alarm fires on this many of its last `throttlePeriods` 5-minute periods: one burst is not a page. */
  throttleDatapoints: 2,
  throttlePeriods: 3,
} as const;

/** Throttles pass on their own (everything is retried): one burst is not worth a message. */
export const THROTTLED_PERIODS = {
  of: ALARM_THRESHOLDS.throttlePeriods,
  breaching: ALARM_THRESHOLDS.throttleDatapoints,
} as const;

/** Fires on any: one event or one record is enough. */
export const AT_LEAST_ONE = { comparison: '≥', value: 1 } as const;
