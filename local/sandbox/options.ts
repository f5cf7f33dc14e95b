import { DEFAULT_CURRENCY } from '../../functions/core/defaults';
import { InvalidSandboxOptionsError } from './errors';
import { toMoneyUnits, type MoneyUnits } from './money';
import type { DeliveredMessage, SandboxOptions } from './types';

/** `SandboxOptions` with defaults applied and amounts in money units. */
export interface ResolvedSandboxOptions {
  readonly port: number;
  readonly host: string;
  readonly apiKey: string;
  readonly balanceUnits: MoneyUnits;
  readonly currency: string;
  readonly priceUnits: MoneyUnits;
  readonly senderIds: readonly string[];
  readonly defaultSenderId: string;
  readonly onDelivered: ((message: DeliveredMessage) => void) | undefined;
}

/**
 * The sandbox's account unless told otherwise: `startSandbox`, `sms-relay sandbox` and the
 * runtime's in-process sandbox (`npm start`, which approves the config's sender IDs instead) all
 * start with it: 500 SMS at a plausible Tanzanian price.
 */
export const SANDBOX_DEFAULTS = {
  port: 0,
  host: '127.0.0.1',
  balance: 10_000,
  currency: DEFAULT_CURRENCY,
  rate: 20,
  senderIds: ['SANDBOX'],
} as const;

const CURRENCY_CODE = /^[A-Z]{3}$/;

/**
 * Applies defaults and rejects what the sandbox cannot honour, so a bad option fails at start-up
 * rather than as a puzzling answer later.
 *
 * @example
 * resolveSandboxOptions({ apiKey: 'k', rate: 0.35 }).priceUnits; // 3500
 */
export function resolveSandboxOptions({
  port = SANDBOX_DEFAULTS.port,
  host = SANDBOX_DEFAULTS.host,
  apiKey,
  balance = SANDBOX_DEFAULTS.balance,
  currency = SANDBOX_DEFAULTS.currency,
  rate = SANDBOX_DEFAULTS.rate,
  senderIds = SANDBOX_DEFAULTS.senderIds,
  defaultSenderId,
  onDelivered,
}: SandboxOptions): ResolvedSandboxOptions {
  if (typeof apiKey !== 'string' || apiKey.length === 0) {
    throw new InvalidSandboxOptionsError('apiKey must be a non-empty string');
  }
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new InvalidSandboxOptionsError(`port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  if (host.length === 0) throw new InvalidSandboxOptionsError('host must not be empty');
  if (!CURRENCY_CODE.test(currency)) {
    throw new InvalidSandboxOptionsError(
      `currency must be a three-letter upper-case code such as TZS, got "${currency}"`,
    );
  }
  if (
    senderIds.length === 0 ||
    senderIds.some((senderId) => senderId.trim().length === 0 || senderId !== senderId.trim())
  ) {
    throw new InvalidSandboxOptionsError(
      'senderIds must be a non-empty list of non-blank names without surrounding spaces',
    );
  }
  const resolvedDefaultSenderId = defaultSenderId ?? senderIds[0];
  if (resolvedDefaultSenderId === undefined || resolvedDefaultSenderId.trim().length === 0) {
    throw new InvalidSandboxOptionsError('defaultSenderId must not be blank');
  }
  return {
    port,
    host,
    apiKey,
    balanceUnits: amountInUnits('balance', balance),
    currency,
    priceUnits: amountInUnits('rate', rate),
    senderIds: [...senderIds],
    defaultSenderId: resolvedDefaultSenderId,
    onDelivered,
  };
}

function amountInUnits(name: string, amount: number): MoneyUnits {
  const units = toMoneyUnits(amount);
  if (units === undefined) {
    throw new InvalidSandboxOptionsError(
      `${name} must be a finite number ≥ 0 with at most 4 decimals, got ${String(amount)}`,
    );
  }
  return units;
}
