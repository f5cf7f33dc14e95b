import { describe, expect, expectTypeOf, it } from 'vitest';
import { isUnder, matchPath, requestPath, requestQuery } from '../../../local/http';

describe('requestPath', () => {
  it.each([
    ['/v1/account/balance?x=1', '/v1/account/balance'],
    ['/hooks/a#frag', '/hooks/a'],
    ['//host/x', '//host/x'],
    ['/a/../b', '/a/../b'],
    [undefined, '/'],
  ])('%s → %s', (target, path) => {
    expect(requestPath(target)).toBe(path);
  });
});

describe('requestQuery', () => {
  it.each([
    ['/_relay/records?state=PARKED&limit=5', 'state=PARKED&limit=5'],
    ['/hooks/a?x=1?y=2', 'x=1?y=2'],
    ['/hooks/a?x=1#frag', 'x=1'],
    ['/hooks/a#frag?x=1', ''],
    ['/hooks/a', ''],
    [undefined, ''],
  ])('%s → %s', (target, query) => {
    expect(requestQuery(target)).toBe(query);
  });
});

describe('isUnder', () => {
  it.each([
    ['/console', true],
    ['/console/', true],
    ['/console/api/records', true],
    ['/consoles', false],
    ['/', false],
  ])('%s under /console → %s', (path, expected) => {
    expect(isUnder(path, '/console')).toBe(expected);
  });
});

describe('matchPath', () => {
  it('takes one non-empty segment per :name, decoded', () => {
    expect(matchPath('/records/:id/redrive', '/records/01J0ABC/redrive')).toEqual({ id: '01J0ABC' });
    expect(matchPath('/routes/:route/:name', '/routes/a%20b/c')).toEqual({ route: 'a b', name: 'c' });
    expect(matchPath('/records', '/records')).toEqual({});
  });

  it.each([
    ['/records/:id', '/records/a/b'],
    ['/records/:id', '/records/'],
    ['/records/:id', '/record/a'],
    ['/records/:id', '/records/%E0%A4%A'],
    ['/records/:id/redrive', '/records/a/redriv'],
  ])('%s does not match %s', (pattern, path) => {
    expect(matchPath(pattern, path)).toBeUndefined();
  });

  it('types the parameters from the pattern', () => {
    const params = matchPath('/records/:id/steps/:step', '/records/a/steps/b');
    expectTypeOf(params).toEqualTypeOf<({ readonly id: string } & { readonly step: string }) | undefined>();
  });
});
