import { CONSOLE_REQUEST_HEADER, PAGE_TOKEN_FRAGMENT } from '../../local/console/contract';

/** A browser tab signed in to a console: its session cookie and the page token its script sends. */
export interface ConsoleTab {
  /** `sms-relay-console-<port>=<value>`, as a `Cookie` header. */
  readonly cookie: string;
  readonly pageToken: string;
  /** What the page sends with every API request: the cookie and the page token. */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Opens a one-time console link as a browser tab does: the cookie it sets, and the page token the
 * signed-in page moves on with (`/console#session=<token>`, which the page's script keeps).
 *
 * @example
 * ```ts
 * const tab = await openConsoleLink(link);
 * await fetch(`${base}/console/api/records`, { headers: tab.headers });
 * ```
 */
export async function openConsoleLink(link: string): Promise<ConsoleTab> {
  const response = await fetch(link, { redirect: 'manual' });
  const html = await response.text();
  const cookie = response.headers.get('set-cookie')?.split(';')[0];
  const pageToken = new RegExp(`url=/console#${PAGE_TOKEN_FRAGMENT}([\\w-]+)`).exec(html)?.[1];
  if (cookie === undefined || pageToken === undefined)
    throw new Error(`the console link signed nothing in (${response.status})`);
  return { cookie, pageToken, headers: { cookie, [CONSOLE_REQUEST_HEADER]: pageToken } };
}
