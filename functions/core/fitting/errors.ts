/**
 * The fitting module's one error, thrown by {@link fitMessage} when its options are unusable
 * (unknown policy, `limit` below {@link MIN_LIMIT}, `maxParts` outside 1–10): a configuration bug.
 * Data problems (an empty or over-long message) are never thrown: they are returned as outcomes.
 *
 * @example
 * ```typescript
 * import { InvalidFitOptionsError, fitMessage } from './index';
 *
 * try {
 *   fitMessage('hello', { limit: 3 });
 * } catch (error) {
 *   if (error instanceof InvalidFitOptionsError) logger.error('bad route config', { error });
 * }
 * ```
 */
class InvalidFitOptionsError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidFitOptionsError';
  }
}

export { InvalidFitOptionsError };
