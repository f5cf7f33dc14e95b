import { describe, expect, it } from 'vitest';
import { parseMemoryDefaults, readMemoryDefaults } from '../../bench/memory';
import { DEFAULT_MEMORY_MB } from '../../infra/sms-relay';
import { join } from 'node:path';

describe('memory defaults read for the cost model', () => {
  it('match the CDK construct defaults', () => {
    expect(readMemoryDefaults(join(__dirname, '..', '..'))).toEqual({ ...DEFAULT_MEMORY_MB });
  });

  it('parse quoted and unquoted keys, and fail loudly when an entry is missing', () => {
    expect(parseMemoryDefaults("export const DEFAULT_MEMORY_MB = { ingest: 512, sender: 256, sweeper: 128, 'balance-watch': 128 } as const")).toEqual({
      ingest: 512,
      sender: 256,
      sweeper: 128,
      'balance-watch': 128,
    });
    expect(() => parseMemoryDefaults('export const DEFAULT_MEMORY_MB = { ingest: 512 }')).toThrow(/sender/);
    expect(() => parseMemoryDefaults('nothing')).toThrow(/not found/);
  });
});
