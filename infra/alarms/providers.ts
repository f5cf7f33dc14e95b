import { Duration } from 'aws-cdk-lib';
import { AlarmSeverity } from '../../functions/core/config/alarms-schema';
import { RelayMetric } from '../../functions/core/metrics';
import { AlarmEach, type AlarmContext, type AlarmSection, MissingData } from './table';
import { AT_LEAST_ONE } from './thresholds';

const FIVE_MINUTES = Duration.minutes(5);

const providerOf = (context: AlarmContext, name: string) => context.providers.find((each) => each.name === name);

/**
 * Each provider's own alarms, when the config has several (docs/providers.md): which one stopped,
 * which balance cannot be read, which is running low. The service-wide alarms still fire for any
 * of them; these name the provider, so the first response goes to the right account.
 */
export const PROVIDERS: AlarmSection = {
  heading: 'Each provider',
  about:
    'with several `providers:`, one of each per provider, read from its `provider` dimension; sends fail over to the next provider of the route meanwhile',
  rows: [
    {
      name: 'ProviderCircuitOpen-<provider>',
      each: AlarmEach.Provider,
      severity: AlarmSeverity.Ticket,
      metricDoc: '`SmsServiceUnreachable` with `provider` (Maximum, 5 min; 1 while its circuit is open)',
      metric: ({ providerMetric }, provider) =>
        providerMetric(RelayMetric.SmsServiceUnreachable, 'Maximum', FIVE_MINUTES, provider),
      threshold: AT_LEAST_ONE,
      missingData: MissingData.KeepState,
      means: ({ provider }) =>
        `the circuit of provider ${provider} is open: its sends failed in a row, so the relay stopped starting sends through it and sends each message to the next provider of its route (\`failover.on\`: unreachable); a route with no other provider waits PENDING`,
      firstResponse: ({ env, provider }) =>
        `${provider}'s status page; \`sms-relay providers --env ${env}\` shows its circuit; nothing to resend: the circuit closes by itself when a probe succeeds`,
    },
    {
      name: 'ProviderBalanceUnreadable-<provider>',
      each: AlarmEach.Provider,
      exists: (context, provider) => providerOf(context, provider)?.readsBalance ?? false,
      severity: AlarmSeverity.Ticket,
      metricDoc: '`BalanceReadFailed` with `provider` (Sum over two balance-watch runs)',
      metric: ({ providerMetric, balanceWindow }, provider) =>
        providerMetric(RelayMetric.BalanceReadFailed, 'Sum', balanceWindow.period, provider),
      threshold: {
        comparison: '≥',
        value: ({ balanceWindow }) => balanceWindow.threshold,
        doc: '2 (a watch at most daily: ≥ 1)',
      },
      missingData: MissingData.Ok,
      means: ({ provider, balanceFailures }) =>
        `the balance watch could not read ${provider}'s balance ${balanceFailures}: ${provider} unreachable, or its key refused; its low-balance notice cannot warn meanwhile (not for the \`http\` type, which has no balance)`,
      firstResponse: ({ env, provider, providerSecret }) =>
        `the balance-watch log; \`sms-relay providers --env ${env}\`; ${provider}'s key in \`${providerSecret}\` (\`<name>-key\`; \`providerApiKey\` for main)`,
    },
    {
      name: 'ProviderBalanceLow-<provider>',
      each: AlarmEach.Provider,
      nameNote: "with the provider's `balance.threshold`",
      exists: (context, provider) => providerOf(context, provider)?.balanceThreshold !== undefined,
      severity: AlarmSeverity.Page,
      metricDoc: '`RemainingBalance` with `provider` (Minimum, 1 h)',
      metric: ({ providerMetric }, provider) =>
        providerMetric(RelayMetric.RemainingBalance, 'Minimum', Duration.hours(1), provider),
      threshold: {
        comparison: '<',
        value: (context, provider) => providerOf(context, provider)?.balanceThreshold ?? 0,
        doc: "the provider's `balance.threshold`",
      },
      missingData: MissingData.KeepState,
      means: ({ provider }) =>
        `the prepaid balance of provider ${provider} is below its threshold (also sent as an SMS naming it to its \`balance.notify\`); at its \`reserve\`, sends move to the next provider of their route`,
      firstResponse: ({ env, provider }) =>
        `top up ${provider}; then \`sms-relay redrive --env ${env} --state PARKED\` for what no provider could pay`,
    },
  ],
};
