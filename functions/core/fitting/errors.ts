/**
 * Base class for errors thrown by the fitting module. Data problems (an empty or over-long
 * message) are never thrown: {@link fitMessage} returns them as outcomes.
 */
class FittingError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'FittingError';
  }
}

/**
 * Thrown by {@link fitMessage} when its options are unusable (unknown policy, `limit` below
 * {@link MIN_LIMIT}, `maxParts` outside 1–99): a configuration bug, not a problem with the message.
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
class InvalidFitOptionsError extends FittingError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidFitOptionsError';
  }
}

export { FittingError, InvalidFitOptionsError };
