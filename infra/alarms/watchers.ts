import { Duration } from 'aws-cdk-lib';
import { AlarmSeverity } from '../../functions/core/config/alarms-schema';
import { RelayMetric } from '../../functions/core/metrics';
import { type AlarmSection, MissingData } from './table';
import { ALARM_THRESHOLDS } from './thresholds';

const silentMinutes = ALARM_THRESHOLDS.sweeperSilentMinutes;

/** The watchers: silence is the alarm. */
export const WATCHERS: AlarmSection = {
  heading: 'The watchers',
  about:
    'an alarm when they did not run, whatever the reason: a disabled schedule, a function stuck in its init, a deploy that broke it',
  rows: [
    {
      name: 'SweeperNotRunning',
      severity: AlarmSeverity.Page,
      metricDoc: '`Sweeps` (SampleCount, 1 min; every sweep publishes it once its steps ran)',
      metric: ({ relay }) => relay(RelayMetric.Sweeps, 'SampleCount', Duration.minutes(1)),
      threshold: { comparison: '<', value: 1, periods: { of: silentMinutes, breaching: silentMinutes } },
      missingData: MissingData.Breaching,
      means: () =>
        `no sweep finished for ${silentMinutes} minutes: escalations, renotify and handoff SMS stop (nobody further is paged, and an on-call change is not announced), and so do retries, stale-send recovery, digests, held summaries and the routes' heartbeats (dead-man's switches). ${silentMinutes} of ${silentMinutes} one-minute periods: one sweep that slips into the next minute does not page`,
      firstResponse: ({ env }) =>
        `the sweep schedule (EventBridge rule \`…SweepSchedule…\` enabled?), the sweeper's errors and log group, the dead-letter queue; meanwhile page the next person by hand (\`sms-relay incidents --env ${env}\`)`,
    },
    {
      name: 'BalanceWatchNotRunning',
      severity: AlarmSeverity.Ticket,
      metricDoc:
        '`BalanceReadFailed` (SampleCount over two watch runs: 2 × the `balance.schedule` `rate()`, at most a day; a `cron()` schedule: a day)',
      metric: ({ relay, balanceWindow }) => relay(RelayMetric.BalanceReadFailed, 'SampleCount', balanceWindow.period),
      threshold: { comparison: '<', value: 1 },
      missingData: MissingData.Breaching,
      means: ({ balanceWindow }) =>
        `the balance watch has not completed a run in ${balanceWindow}: nobody is warned before the balance runs dry`,
      firstResponse: () =>
        'the balance schedule (EventBridge rule enabled?), the balance-watch errors and log group, the dead-letter queue',
    },
    {
      name: 'BalanceUnreadable',
      severity: AlarmSeverity.Ticket,
      metricDoc: '`BalanceReadFailed` (Sum over the same window)',
      metric: ({ relay, balanceWindow }) => relay(RelayMetric.BalanceReadFailed, 'Sum', balanceWindow.period),
      threshold: {
        comparison: '≥',
        value: ({ balanceWindow }) => balanceWindow.threshold,
        doc: '2 (a watch at most daily: ≥ 1)',
      },
      missingData: MissingData.Ok,
      means: ({ balanceFailures }) =>
        `the balance watch ran but could not read the balance ${balanceFailures}: the service unreachable, or \`providerApiKey\` refused`,
      firstResponse: ({ env, providerSecret }) =>
        `the balance-watch log; \`sms-relay balance --env ${env}\`; the key in \`${providerSecret}\``,
    },
    {
      name: 'BalanceLow',
      nameNote: 'with `balance.threshold` and one provider (with several: `ProviderBalanceLow-<provider>`)',
      // Several providers' balances (in their currencies) have no one minimum worth a threshold.
      exists: ({ balanceThreshold, providers }) => balanceThreshold !== undefined && providers.length <= 1,
      severity: AlarmSeverity.Page,
      metricDoc: '`RemainingBalance` (Minimum, 1 h)',
      metric: ({ relay }) => relay(RelayMetric.RemainingBalance, 'Minimum', Duration.hours(1)),
      threshold: {
        comparison: '<',
        value: ({ balanceThreshold }) => balanceThreshold ?? 0,
        doc: '`balance.threshold`',
      },
      // The balance arrives once per watch run; between runs the last reading stands.
      missingData: MissingData.KeepState,
      means: ({ balanceThreshold }) =>
        `the prepaid balance is below ${balanceThreshold} (also sent as an SMS to \`balance.notify\`)`,
      firstResponse: ({ env }) => `top up; then \`sms-relay redrive --env ${env} --state PARKED\``,
    },
  ],
};
