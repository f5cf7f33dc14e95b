/**
 * Whether a URL's host name is this machine: `localhost`, `127.0.0.0/8` or `::1`. Only such a URL
 * may be plain http for a provider that takes https: a local stand-in, never a network path.
 *
 * @example
 * ```ts
 * isLoopbackHost(new URL('http://127.0.0.1:4020/send').hostname); // true
 * isLoopbackHost('gw.example.com'); // false
 * ```
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host);
}
