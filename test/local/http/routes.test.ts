import { describe, expect, expectTypeOf, it } from 'vitest';
import { createRouter, routeTable } from '../../../local/http';

const ROUTES = routeTable<{ readonly log: string[] }, string>()({
  'GET /health': () => 'health',
  'HEAD /health': () => 'health head',
  'GET /records/:id': (_call, { id }) => `record ${id}`,
  'POST /records/:id/redrive': (_call, { id }) => `redrive ${id}`,
  'DELETE /records/:id': (_call, { id }) => `delete ${id}`,
});

describe('createRouter', () => {
  const route = createRouter(ROUTES);

  it('finds the route of a method and path, with its parameters decoded', async () => {
    const found = route('GET', '/records/01J%20A');
    expect(found).toMatchObject({ key: 'GET /records/:id', params: { id: '01J A' } });
    expect(await found?.handler?.({ log: [] }, found.params as { id: string })).toBe('record 01J A');
  });

  it('gives the methods a known path takes, in table order, for a 405', () => {
    expect(route('PUT', '/records/a')).toEqual({ allowed: ['GET', 'DELETE'] });
    expect(route('POST', '/health')).toEqual({ allowed: ['GET', 'HEAD'] });
  });

  it('finds nothing for an unknown path, a missing parameter or a malformed escape', () => {
    expect(route('GET', '/nothing')).toBeUndefined();
    expect(route('GET', '/records/')).toBeUndefined();
    expect(route('GET', '/records/%E0%A4%A')).toBeUndefined();
    expect(route('GET', '/records/a/b')).toBeUndefined();
  });

  it('takes a HEAD to the GET route only when asked to', () => {
    const table = { 'GET /page': 'page', 'POST /page': 'post' };
    expect(createRouter(table)('HEAD', '/page')).toEqual({ allowed: ['GET', 'POST'] });
    expect(createRouter(table, { headAsGet: true })('HEAD', '/page')).toMatchObject({ handler: 'page' });
  });

  it("types each handler's parameters from its key", () => {
    expectTypeOf<keyof Parameters<(typeof ROUTES)['POST /records/:id/redrive']>[1]>().toEqualTypeOf<'id'>();
    expectTypeOf<keyof Parameters<(typeof ROUTES)['GET /health']>[1]>().toBeNever();
  });
});
