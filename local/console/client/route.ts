/** Hash routing: `#/activity` (default), `#/records/<id>`, `#/templates`, `#/credit`, `#/routes`, `#/oncall`. */
import { useEffect, useState } from 'preact/hooks';

export type Page =
  | { readonly name: 'activity' }
  | { readonly name: 'record'; readonly id: string }
  | { readonly name: 'templates' }
  | { readonly name: 'credit' }
  | { readonly name: 'routes' }
  | { readonly name: 'oncall' };

export function parseHash(hash: string): Page {
  const path = hash.replace(/^#\/?/, '');
  const [head, ...rest] = path.split('/');
  switch (head) {
    case 'records': {
      const raw = rest.join('/');
      let id = raw;
      try {
        id = decodeURIComponent(raw);
      } catch {
        // keep it as typed
      }
      return id ? { name: 'record', id } : { name: 'activity' };
    }
    case 'templates':
      return { name: 'templates' };
    case 'credit':
      return { name: 'credit' };
    case 'routes':
      return { name: 'routes' };
    case 'oncall':
      return { name: 'oncall' };
    default:
      return { name: 'activity' };
  }
}

export function recordHref(id: string): string {
  return `#/records/${encodeURIComponent(id)}`;
}

export function useHashPage(): Page {
  const [page, setPage] = useState<Page>(() => parseHash(window.location.hash));
  useEffect(() => {
    const onChange = () => setPage(parseHash(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return page;
}
