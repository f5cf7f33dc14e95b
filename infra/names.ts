/**
 * The stack name for an environment: `SmsRelay-<env>`.
 *
 * @example
 * ```ts
 * relayStackName('prod'); // 'SmsRelay-prod'
 * ```
 */
export function relayStackName(environmentName: string): string {
  return `SmsRelay-${environmentName}`;
}

/** Stack outputs other tools read by name: `sms-relay … --env <env>` finds its table by `TableName`. */
export const STACK_OUTPUTS = { tableName: 'TableName' } as const;

/**
 * `balance-watch` → `BalanceWatch`: construct ids and alarm names from handler names.
 *
 * @example
 * ```ts
 * pascalCase('balance-watch'); // 'BalanceWatch'
 * ```
 */
export function pascalCase(name: string): string {
  return name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
