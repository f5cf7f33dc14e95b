import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { HttpError, parseRequest, queryObject } from '../../../local/http';

describe('parseRequest', () => {
  const Query = z.object({
    state: z.enum(['PARKED', 'FAILED']).optional(),
    limit: z.coerce.number().int().min(1).max(500).optional(),
  });

  it('gives the parsed value', () => {
    expect(parseRequest(Query, { state: 'PARKED', limit: '20' })).toEqual({ state: 'PARKED', limit: 20 });
  });

  it('refuses with a 400 naming each problem, or the status asked for', () => {
    let caught: unknown;
    try {
      parseRequest(Query, { state: 'SENT', limit: '0' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(HttpError);
    expect((caught as HttpError).status).toBe(400);
    expect((caught as HttpError).message).toMatch(/state: .*; limit: /);
    expect(() => parseRequest(z.object({ id: z.string().regex(/^[0-9A-Z]+$/) }), { id: 'x' }, { status: 404 })).toThrow(
      expect.objectContaining({ status: 404 }),
    );
  });
});

describe('queryObject', () => {
  it('drops empty parameters and keeps the last of a repeated one', () => {
    expect(queryObject(new URLSearchParams('state=&route=a&route=b&limit=5'))).toEqual({ route: 'b', limit: '5' });
  });
});
