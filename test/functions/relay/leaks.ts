import { expect } from 'vitest';
import { SECRETS } from './support';

/** The national significant numbers of every phone number in these tests: a match is a full number. */
const NUMBERS = ['712345678', '754111222'] as const;

/**
 * Asserts that no captured log line holds a secret value or a full phone number in any form
 * (`255712345678`, `+255 712 345 678` and `0712345678` all contain the nine digits).
 */
export function expectNoLeaks(logger: { text(): string }): void {
  const text = logger.text().replace(/(\d) (?=\d)/g, '$1');
  for (const secret of Object.values(SECRETS)) expect(text, 'a secret value was logged').not.toContain(secret);
  for (const number of NUMBERS) expect(text, 'a full phone number was logged').not.toContain(number);
}
