/**
 * The console's pages, one entry each: where it is (`#/<path>`), its title, its place in the menu
 * and what it shows. Adding a page is an entry here plus its component; the shell (`app.tsx`)
 * draws the menu, the title and the page from this table alone.
 */
import type { ComponentChild } from 'preact';
import type { Overview } from '../contract';
import { lazy } from './lazy';
import { ActivityPage, prefetchActivity } from './pages/activity';
import { prefetchCredit } from './pages/credit-request';
import { ACTIVITY_PATH, matchPath, type PathParams, RECORD_PATH } from './route';

// Activity, the page the console opens on, is in the first script; each other page is a chunk
// loaded when first shown (Credit's brings uPlot).
const RecordPage = lazy(async () => (await import('./pages/record')).RecordPage);
const TemplatesPage = lazy(async () => (await import('./pages/templates')).TemplatesPage);
const CreditPage = lazy(async () => (await import('./pages/credit')).CreditPage);
const RoutesPage = lazy(async () => (await import('./pages/routes')).RoutesPage);
const OnCallPage = lazy(async () => (await import('./pages/oncall')).OnCallPage);

/** What a page is drawn with: the relay's overview, and the parameters its path names. */
export interface PageProps<Path extends string> {
  readonly overview: Overview;
  readonly params: PathParams<Path>;
}

/** One page of the console. */
export interface PageEntry<Path extends string = string> {
  /** Its place after `#/`; `:name` segments are parameters (see `matchPath`). */
  readonly path: Path;
  /** The tab's title, before ` · sms-relay console`. */
  readonly title: string;
  /**
   * Its menu entry: the label of its own, or `{ within: <page> }` for a page reached by links
   * (a record), which lights up that page's entry while shown.
   */
  readonly menu: string | { readonly within: string };
  /** What it shows. (A method, so the table of entries with different paths is one type.) */
  render(props: PageProps<Path>): ComponentChild;
  /**
   * Asks for the page's first answers (`prefetch`) and its module (`preload`) when the console
   * opens on it, alongside the overview the page is drawn with, instead of after it.
   * @default nothing asked early
   */
  prefetch?(): void;
}

/** An entry whose `render` is typed by its own path's parameters. */
const page = <const Path extends string>(entry: PageEntry<Path>): PageEntry<Path> => entry;

/** Every page, in menu order. */
export const PAGES = {
  activity: page({
    path: ACTIVITY_PATH,
    title: 'Activity',
    menu: 'Activity',
    render: ({ overview }) => <ActivityPage overview={overview} />,
    prefetch: prefetchActivity,
  }),
  record: page({
    path: RECORD_PATH,
    title: 'Record',
    menu: { within: 'activity' },
    render: ({ overview, params: { id } }) => <RecordPage key={id} id={id} overview={overview} />,
    prefetch: RecordPage.preload,
  }),
  templates: page({
    path: 'templates',
    title: 'Templates',
    menu: 'Templates',
    render: ({ overview }) => <TemplatesPage overview={overview} />,
    prefetch: TemplatesPage.preload,
  }),
  credit: page({
    path: 'credit',
    title: 'Credit',
    menu: 'Credit',
    render: ({ overview }) => <CreditPage overview={overview} />,
    prefetch: () => {
      prefetchCredit();
      CreditPage.preload();
    },
  }),
  routes: page({
    path: 'routes',
    title: 'Routes',
    menu: 'Routes',
    render: () => <RoutesPage />,
    prefetch: RoutesPage.preload,
  }),
  oncall: page({
    path: 'oncall',
    title: 'On call',
    menu: 'On call',
    render: () => <OnCallPage />,
    prefetch: OnCallPage.preload,
  }),
} as const;

export type PageName = keyof typeof PAGES;

/** A page as a hash shows it: its entry and the parameters its path names. */
export interface ShownPage {
  readonly name: PageName;
  readonly entry: PageEntry;
  readonly params: Readonly<Record<string, string>>;
}

const ENTRIES = Object.entries(PAGES) as [PageName, PageEntry][];

/** The page `hash` shows: the first whose path matches it, else the home page (`#/`, an unknown place). */
export function pageOf(hash: string): ShownPage {
  for (const [name, entry] of ENTRIES) {
    const params = matchPath(entry.path, hash);
    if (params !== undefined) return { name, entry, params };
  }
  return { name: 'activity', entry: PAGES.activity, params: {} };
}

/** The menu: each page with an entry of its own, in table order. */
export const MENU: readonly { readonly name: PageName; readonly label: string; readonly href: string }[] =
  ENTRIES.flatMap(([name, entry]) =>
    typeof entry.menu === 'string' ? [{ name, label: entry.menu, href: `#/${entry.path}` }] : [],
  );

/** The menu entry lit while `name` is shown: its own, or the one it is `within`. */
export function menuOf(name: PageName): string {
  const { menu } = PAGES[name] as PageEntry;
  return typeof menu === 'string' ? name : menu.within;
}
