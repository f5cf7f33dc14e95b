import { expect } from 'vitest';
import { ConfigError } from '../../../../functions/core/config/errors';
import { loadConfig } from '../../../../functions/core/config/load';

/** The problems `loadConfig` reports for `text`, which it must refuse with a `ConfigError`. */
export function problemsOf(text: string): readonly string[] {
  try {
    loadConfig(text, 'test.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected the config to be refused');
}
