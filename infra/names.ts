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
