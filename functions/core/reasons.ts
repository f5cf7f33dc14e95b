/**
 * The one wording of each reason an SMS waits or ends unsent for a reason the relay decides, shared
 * by every surface that shows it: the record's stored `reason` (so `sms-relay logs`, the console's
 * API and the record page read the same text), the terminal's line and the attention line. The
 * sender, the credit gate and the formatters take their text from here, never their own.
 */

/** The command that sends parked SMS again, as every reason's action names it. */
export const REDRIVE_PARKED = 'npx sms-relay redrive --state PARKED';

/** Each reason: `text`, what happened in a few words; `action`, what a person does about it. */
export const REASONS = {
  /** The SMS service refused a send (402), or the projected balance cannot pay it at all. */
  insufficientBalance: {
    text: 'insufficient balance',
    action: `top up, then run "${REDRIVE_PARKED}"`,
  },
  /** A normal route's SMS would leave less than `balance.reserve`, kept for critical routes. */
  balanceReserve: {
    text: 'balance reserve',
    action: `top up, then run "${REDRIVE_PARKED}"`,
  },
} as const;
export type ReasonCode = keyof typeof REASONS;

/**
 * The stored and shown reason: `insufficient balance: top up, then run "npx sms-relay redrive --state PARKED"`;
 * `detail` goes between the text and the action.
 *
 * @example
 * ```ts
 * reasonText('balanceReserve', '20 credits would leave 480, below the reserve of 500 kept for critical routes');
 * ```
 */
export function reasonText(code: ReasonCode, detail?: string): string {
  const { text, action } = REASONS[code];
  return detail === undefined || detail === '' ? `${text}: ${action}` : `${text}: ${detail}; ${action}`;
}

/**
 * The reason a record carries, in today's wording: records written before this table said
 * `insufficient balance (402): waiting for a top-up and redrive`; they read as the table's text.
 *
 * @example
 * ```ts
 * currentReason('insufficient balance (402): waiting for a top-up and redrive'); // reasonText('insufficientBalance')
 * ```
 */
export function currentReason(stored: string): string {
  return LEGACY_TEXTS.has(stored) ? reasonText(LEGACY_TEXTS.get(stored)!) : stored;
}

/** Reasons stored before this table, word for word, and the reason each was. */
const LEGACY_TEXTS: ReadonlyMap<string, ReasonCode> = new Map([
  ['insufficient balance (402): waiting for a top-up and redrive', 'insufficientBalance'],
]);
