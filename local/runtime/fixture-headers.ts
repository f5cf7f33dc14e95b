import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { GITHUB } from '../../functions/core/sources/github';
import { SENTRY } from '../../functions/core/sources/sentry';

/**
 * Sources that name the event only in a header, never in the body, and how an example payload's
 * file name gives it: the name starts with the event (`github/issues-opened.json`: `issues`,
 * `shopify/orders-create.json`: `orders/create`). Sources that name the event in the body
 * (Stripe, PagerDuty, GitLab's `object_kind`, WooCommerce's ping) need nothing here.
 */
const EVENT_FROM_NAME: Readonly<Record<string, (stem: string) => Record<string, string>>> = {
  github: (stem) => ({ [GITHUB.eventHeader]: stem.split(/[-.]/)[0]! }),
  sentry: (stem) => ({ [SENTRY.resourceHeader]: stem.split(/[-.]/)[0]! }),
  shopify: (stem) => ({ 'x-shopify-topic': stem.replace('-', '/') }),
  // WooCommerce sends the topic and its two halves: `order.created`, `order`, `created`.
  woocommerce: (stem) => {
    const [resource, event = resource] = stem.split('-', 2) as [string, string?];
    return { 'x-wc-webhook-topic': `${resource}.${event}`, 'x-wc-webhook-resource': resource, 'x-wc-webhook-event': event };
  },
};

/**
 * The headers an example payload file needs beyond its signature, inferred from its name as the
 * sender would have set them: the one place both the console's template playground and
 * `send-test` take them from. Only a file in a directory named after the source
 * (`test/fixtures/<source>/<event>-….json`, the examples' layout) is read this way; any other file
 * gets none (give `--header` instead).
 *
 * @example
 * ```ts
 * fixtureHeaders('github', 'test/fixtures/github/ping.json'); // { 'x-github-event': 'ping' }
 * fixtureHeaders('github', 'my-payload.json');                // {}
 * ```
 */
export function fixtureHeaders(sourceName: string, path: string): Record<string, string> {
  const rule = EVENT_FROM_NAME[sourceName];
  if (rule === undefined || basename(dirname(path)) !== sourceName) return {};
  const name = basename(path);
  const stem = name.slice(0, name.length - (/\.(json|txt)$/.exec(name)?.[0].length ?? 0));
  return stem === '' ? {} : rule(stem);
}

/** What an example payload file may be called: no path, nothing a shell or a URL would read twice. */
const EXAMPLE_NAME = /^[\w.-]+\.json$/;

/**
 * The example JSON payloads of a source (`<fixturesDir>/<source>/*.json`), sorted by name; none
 * when the directory is missing (an installed package without the examples).
 *
 * @example
 * ```ts
 * examplePayloads('test/fixtures', 'alertmanager'); // ['firing-grouped.json', 'firing-single.json', 'resolved.json']
 * ```
 */
export function examplePayloads(fixturesDir: string, sourceName: string): string[] {
  try {
    return readdirSync(join(fixturesDir, sourceName))
      .filter((name) => EXAMPLE_NAME.test(name))
      .sort();
  } catch {
    return [];
  }
}
