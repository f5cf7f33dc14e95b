import { describe, expect, it } from 'vitest';
import { readSchedule } from '../../../functions/core/schedule';

describe('readSchedule', () => {
  it('reads a rate, singular unit and spacing included', () => {
    expect(readSchedule('rate(5 minutes)')).toEqual({
      kind: 'rate',
      count: 5,
      unit: 'minute',
      writtenUnit: 'minutes',
      spacedExactly: true,
    });
    expect(readSchedule('rate( 1  hour )')).toMatchObject({
      kind: 'rate',
      count: 1,
      unit: 'hour',
      spacedExactly: false,
    });
  });

  it('reads a cron expression into its fields', () => {
    expect(readSchedule('cron(0 6 * * ? *)')).toEqual({ kind: 'cron', fields: ['0', '6', '*', '*', '?', '*'] });
  });

  it('reads nothing else', () => {
    for (const expression of [
      'every hour',
      'rate(5 weeks)',
      'Rate(5 minutes)',
      'rate(5minutes)',
      'cron()',
      ' rate(1 hour)',
    ])
      expect(readSchedule(expression), expression).toBeUndefined();
  });
});
