import { z } from 'zod';
import { BALANCE_SCHEDULE } from '../defaults';
import { readSchedule } from '../schedule';

// The SMS networks' rule for alphanumeric sender names: 1 to 11 letters, digits or spaces.
export const senderId = z.string().regex(/^[A-Za-z0-9 ._-]{1,11}$/, {
  message: 'sender ID must be 1 to 11 letters, digits, spaces, dots, dashes or underscores',
});

const schedule = z.string().refine((value) => readSchedule(value) !== undefined, {
  message: 'schedule must be an EventBridge expression like "rate(1 hour)" or "cron(0 6 * * ? *)"',
});

/**
 * A balance watch: the threshold that sends the low-balance SMS, the reserve only critical routes
 * may spend, who is told, and how often the balance is read. The top-level `balance:` is the
 * first provider's; a provider's own `balance:` block is its own.
 */
export const BalanceSchema = z
  .strictObject({
    threshold: z.number().nonnegative(),
    reserve: z.number().nonnegative().default(0),
    notify: z.array(z.string().min(1)).default([]),
    email: z.email().optional(),
    schedule: schedule.default(BALANCE_SCHEDULE),
  })
  .refine((balance) => balance.reserve === 0 || balance.reserve < balance.threshold, {
    message: 'reserve must be below threshold: the low-balance SMS has to warn before the reserve is reached',
    path: ['reserve'],
  });
