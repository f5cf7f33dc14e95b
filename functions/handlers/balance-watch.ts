import type { Context, ScheduledEvent } from 'aws-lambda';
import { checkBalance, type BalanceCheck } from '../relay/balance';
import { prepareOnLambda } from './wiring/context';
import { invoke } from './wiring/invoke';
import { withInvocationSmsClients } from './wiring/sms';

await prepareOnLambda();

/**
 * The balance watch, on `balance.schedule`: reads the balance, publishes `RemainingBalance`, and
 * records one low-balance SMS per drop below the threshold (re-armed when the balance recovers).
 *
 * @example
 * ```ts
 * const { balance, alerted } = await handler(scheduledEvent, lambdaContext);
 * ```
 */
export async function handler(_event: ScheduledEvent, lambdaContext?: Context): Promise<BalanceCheck> {
  return await invoke(lambdaContext, (relay) => withInvocationSmsClients(relay, checkBalance));
}
