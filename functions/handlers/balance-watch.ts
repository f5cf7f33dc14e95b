import type { Context, ScheduledEvent } from 'aws-lambda';
import { checkBalance, type BalanceCheck } from '../relay/balance';
import { prepareOnLambda } from './runtime/context';
import { invoke } from './runtime/invoke';
import { withInvocationSmsClients } from './runtime/sms';

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
  return await invoke(lambdaContext, (runtime) => withInvocationSmsClients(runtime, checkBalance));
}
