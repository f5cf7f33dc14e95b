import { isValidElement } from 'preact';
import { describe, expect, it } from 'vitest';
import { MENU, menuOf, PAGES, type PageEntry, type PageName, pageOf } from '../../../local/console/client/pages';
import { ACTIVITY_HREF, hrefOf, matchPath, recordHref } from '../../../local/console/client/route';
import type { Overview } from '../../../local/console/contract';

const names = Object.keys(PAGES) as PageName[];
const entry = (name: PageName): PageEntry => PAGES[name] as PageEntry;

describe('the console page table', () => {
  it('opens each address on the page it opened before the table', () => {
    const shown = (hash: string) => {
      const { name, params } = pageOf(hash);
      return { name, ...params };
    };
    expect(shown('')).toEqual({ name: 'activity' });
    expect(shown('#')).toEqual({ name: 'activity' });
    expect(shown('#/')).toEqual({ name: 'activity' });
    expect(shown('#/activity')).toEqual({ name: 'activity' });
    expect(shown('#/nowhere')).toEqual({ name: 'activity' });
    expect(shown('#/templates')).toEqual({ name: 'templates' });
    expect(shown('#templates')).toEqual({ name: 'templates' });
    expect(shown('#/credit')).toEqual({ name: 'credit' });
    expect(shown('#/credit/extra')).toEqual({ name: 'credit' });
    expect(shown('#/routes')).toEqual({ name: 'routes' });
    expect(shown('#/oncall')).toEqual({ name: 'oncall' });
    expect(shown('#/records/01JGFJJZ000000000000000000')).toEqual({ name: 'record', id: '01JGFJJZ000000000000000000' });
    expect(shown('#/records/a%2Fb')).toEqual({ name: 'record', id: 'a/b' });
    expect(shown('#/records/a/b')).toEqual({ name: 'record', id: 'a/b' });
    // Not percent-encoding: kept as typed.
    expect(shown('#/records/%E0%A4%A')).toEqual({ name: 'record', id: '%E0%A4%A' });
    // A record page needs an id.
    expect(shown('#/records/')).toEqual({ name: 'activity' });
    expect(shown('#/records')).toEqual({ name: 'activity' });
  });

  it('has a menu entry for every page: one of its own, in order, or one it lights up while shown', () => {
    expect(MENU.map(({ name, label, href }) => [name, label, href])).toEqual([
      ['activity', 'Activity', '#/activity'],
      ['templates', 'Templates', '#/templates'],
      ['credit', 'Credit', '#/credit'],
      ['routes', 'Routes', '#/routes'],
      ['oncall', 'On call', '#/oncall'],
    ]);
    const menuNames = new Set<string>(MENU.map(({ name }) => name));
    for (const name of names) expect(menuNames, `${name} lights up a menu entry`).toContain(menuOf(name));
    expect(menuOf('record')).toBe('activity');
  });

  it('reaches every page by its menu entry or its link', () => {
    for (const { name, href } of MENU) expect(pageOf(href).name).toBe(name);
    expect(pageOf(ACTIVITY_HREF).name).toBe('activity');
    for (const id of ['01JGFJJZ000000000000000000', 'a/b c%', 'é#?']) {
      expect(recordHref(id)).toMatch(/^#\/records\/[^/#?]+$/);
      expect(pageOf(recordHref(id))).toMatchObject({ name: 'record', params: { id } });
    }
    const reached = new Set([...MENU.map(({ name }) => name), pageOf(recordHref('x')).name]);
    expect([...reached].sort()).toEqual([...names].sort());
  });

  it('titles and draws every page from its entry', () => {
    expect(Object.fromEntries(names.map((name) => [name, entry(name).title]))).toEqual({
      activity: 'Activity',
      record: 'Record',
      templates: 'Templates',
      credit: 'Credit',
      routes: 'Routes',
      oncall: 'On call',
    });
    const overview = { routes: [], states: [], redriveStates: [] } as unknown as Overview;
    const components = names.map((name) => {
      const drawn = entry(name).render({ overview, params: { id: 'x' } });
      expect(isValidElement(drawn), `${name} draws an element`).toBe(true);
      return (drawn as { type: unknown }).type;
    });
    // Each page its own component.
    expect(new Set(components).size).toBe(names.length);
  });

  it('matches paths with parameters and builds their links', () => {
    expect(matchPath('records/:id', 'records/x')).toEqual({ id: 'x' });
    expect(matchPath('records/:id', '#/routes/x')).toBeUndefined();
    expect(matchPath('a/:b/c/:d', '#/a/1/c/2/3')).toEqual({ b: '1', d: '2/3' });
    expect(matchPath('a/:b/c/:d', '#/a/1/x/2')).toBeUndefined();
    expect(hrefOf('a/:b/c/:d', { b: '1 2', d: '/' })).toBe('#/a/1%202/c/%2F');
  });
});
