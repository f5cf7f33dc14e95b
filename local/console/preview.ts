import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { compileRoute, numberingOf } from '../../functions/core/config/compile';
import { describeIssues } from '../../functions/core/config/parse';
import { RouteSchema } from '../../functions/core/config/schema';
import { maskMsisdn, maskNumbersInText } from '../../functions/core/recipients';
import type { MessageStore } from '../../functions/store';
import { examplePayloads, examplesDirectory, fixtureHeaders } from '../shared/fixture-headers';
import { looksFormEncoded } from '../shared/preview';
import { HttpError } from '../http';
import type { PayloadChoice, PreviewAnswer, PreviewRequest } from './contract';
import { evaluateOffThread } from './preview-thread';
import type { ConsoleSource } from './source';
import { captureView, type CapturingRoute } from './views';

/** Fixtures and captures offered per route; more is noise in a picker. */
const MAX_CHOICES = 25;

/**
 * The payloads the template playground offers for a route: its captured webhooks (newest first,
 * numbers masked) and the example payloads of its source.
 */
export async function payloadChoices(
  source: ConsoleSource,
  store: MessageStore,
  routeId: string,
): Promise<PayloadChoice[]> {
  const route = source.loaded.routes.get(routeId);
  if (route === undefined) throw new HttpError(404, `no route "${routeId}"`);
  const captures = await store.listCaptures(routeId, { limit: MAX_CHOICES });
  const fixtures = fixtureNames(source, route.pack.name).map(
    (name): PayloadChoice => ({
      kind: 'fixture',
      id: name,
      label: `example: ${route.pack.name}/${name}`,
      body: readFixture(source, route.pack.name, name),
      headers: exampleHeaders(source, route.pack.name, name),
    }),
  );
  return [
    ...captures.map((capture): PayloadChoice => {
      const shown = captureView(capture, route);
      return {
        kind: 'capture',
        id: capture.id,
        label: `captured ${capture.receivedAt}`,
        body: shown.bodyEncoding === 'utf8' ? shown.body : '(binary body)',
        headers: shown.headers,
      };
    }),
    ...fixtures,
  ];
}

/**
 * Renders a payload through a route with the playground's edits (template, `when`, recipients):
 * the edited route is validated and compiled as the config would be, then evaluated by the same
 * code as `sms-relay preview` and ingest, in a worker thread. Nothing is recorded or sent.
 */
export async function previewRoute(
  source: ConsoleSource,
  store: MessageStore,
  request: PreviewRequest,
): Promise<PreviewAnswer> {
  const raw = source.rawRoutes[request.route];
  const route = source.loaded.routes.get(request.route);
  if (raw === undefined || route === undefined) throw new HttpError(404, `no route "${request.route}"`);
  const edited: Record<string, unknown> = { ...raw };
  if (request.template !== undefined)
    setOrDrop(
      edited,
      'template',
      ownUnlessEdited(request.template, route.config.template ?? route.pack.defaultTemplate),
    );
  if (request.when !== undefined) setOrDrop(edited, 'when', ownUnlessEdited(request.when, route.config.when));
  if (request.recipients !== undefined)
    edited['recipients'] = request.recipients.map((entry) => entry.trim()).filter((entry) => entry !== '');
  // Numbers are masked on the page as everywhere else, the config's own recipients too.
  const written = stringify({ [request.route]: edited });
  const masked = maskNumbersInText(written);
  const yaml =
    masked === written ? written : `# phone numbers are masked: keep the recipients your config has\n${masked}`;

  const invalid = (problems: readonly string[]): PreviewAnswer => ({
    verdict: 'invalid',
    reason: problems.map((problem) => maskNumbersInText(problem)).join('; '),
    messages: [],
    dropped: [],
    warnings: [],
    yaml,
  });
  const parsed = RouteSchema.safeParse(edited);
  if (!parsed.success) return invalid(describeIssues(parsed.error.issues));
  const problems: string[] = [];
  // Only template, condition and recipients change: the route's engine (time zone, currency) serves.
  const { defaultSenderId } = source.loaded.settings.provider;
  // Compiled here too, for the problems of an invalid edit; the worker compiles its own copy.
  const compiled = compileRoute(
    request.route,
    parsed.data,
    route.engine,
    defaultSenderId,
    problems,
    undefined,
    source.loaded.onCall,
    numberingOf(source.loaded.settings),
  );
  if (compiled === undefined) return invalid(problems.map((problem) => problem.replace(/^routes\.[^.]+\./, '')));

  const { body, headers, query } = await payloadOf(source, store, request, route);
  // Off the main thread: a template that runs long must not hold the webhooks up (preview-thread.ts).
  const result = await evaluateOffThread({
    routeId: request.route,
    route: parsed.data,
    engineOptions: route.engine.options,
    defaultSenderId,
    onCall: source.loaded.onCall,
    numbering: numberingOf(source.loaded.settings),
    body,
    headers,
    query,
  });
  const { creditsPerUnit } = await store.getBalanceState();
  return {
    verdict: result.verdict,
    reason: result.reason === undefined ? null : maskShown(result.reason),
    messages: result.messages.map((message) => {
      // A captured number stands in as the digits its mask shows (255711111678 for 2557****678):
      // the payload naming the config's own recipient must not count as a second one.
      const to = [...new Set(message.to.map(maskMsisdn))];
      return {
        to,
        text: maskShown(message.text),
        encoding: message.encoding,
        characters: message.characters,
        segments: message.segments,
        estimatedCost: creditsPerUnit === undefined ? null : message.segments * to.length * creditsPerUnit,
        ...(message.critical === true ? { critical: true as const } : {}),
      };
    }),
    dropped: result.dropped.map(({ entry, reason }) => ({ entry: maskShown(entry), reason: maskShown(reason) })),
    warnings: result.warnings.map(maskShown),
    yaml,
  };
}

/**
 * The page starts from the route's template and condition as the overview shows them, numbers
 * masked: sent back unchanged, they mean the route's own, not a template that texts `2557****678`.
 */
function ownUnlessEdited(sent: string, own: string | undefined): string {
  return own !== undefined && sent === maskNumbersInText(own) ? own : sent;
}

function setOrDrop(route: Record<string, unknown>, key: string, value: string): void {
  if (value.trim() === '') delete route[key];
  else route[key] = value;
}

async function payloadOf(
  source: ConsoleSource,
  store: MessageStore,
  request: PreviewRequest,
  route: CapturingRoute,
): Promise<{ body: Uint8Array; headers: Record<string, string>; query?: Readonly<Record<string, string>> }> {
  const sourceName = route.pack.name;
  if (request.capture !== undefined) {
    const capture = await store.getCapture(request.route, request.capture);
    if (capture === undefined)
      throw new HttpError(404, `no captured payload ${request.capture} on route "${request.route}" (expired?)`);
    // Evaluated as the page shows it, numbers masked: masking only the output let a template print
    // a number the page hides (`{{ phone }}x`, reversed, one digit at a time in a recipient).
    const shown = captureView(capture, route);
    const text = shown.bodyEncoding === 'utf8' ? shown.body : Buffer.from(shown.body, 'base64').toString('latin1');
    const body = Buffer.from(withStandIns(text), shown.bodyEncoding === 'utf8' ? 'utf8' : 'latin1');
    return {
      body,
      headers: Object.fromEntries(Object.entries(shown.headers).map(([name, value]) => [name, withStandIns(value)])),
    };
  }
  if (request.fixture !== undefined) {
    if (!fixtureNames(source, sourceName).includes(request.fixture))
      throw new HttpError(404, `no example payload "${request.fixture}" for ${sourceName}`);
    const query = route.pack.examples.query;
    return {
      body: Buffer.from(readFixture(source, sourceName, request.fixture)),
      headers: exampleHeaders(source, sourceName, request.fixture),
      ...(query === undefined ? {} : { query }),
    };
  }
  const body = Buffer.from(request.payload ?? '', 'utf8');
  const headers = Object.fromEntries(
    Object.entries(request.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
  );
  headers['content-type'] ??= looksFormEncoded(body) ? 'application/x-www-form-urlencoded' : 'application/json';
  return { body, headers };
}

/** A number as `maskMsisdn` shows it: the first four and the last three digits of its `255` form. */
const MASKED_NUMBER = /(?<!\d)(\d{4})\*{4}(\d{3})(?!\d)/g;
/** What stands for the hidden digits: with `2556`/`2557` in front it makes a valid mobile number. */
const HIDDEN_STAND_IN = '11111';

/**
 * Each masked number of a text given a stand-in, a valid number made of the digits the mask shows
 * (`2557****198` → `255711111198`): a recipient the payload names still resolves in the preview,
 * and masked again it reads as the page shows it, while the hidden digits never reach a template.
 */
function withStandIns(text: string): string {
  return text.replace(MASKED_NUMBER, (_, first: string, last: string) => `${first}${HIDDEN_STAND_IN}${last}`);
}

const STAND_IN = new RegExp(`(?<!\\d)(255[67])${HIDDEN_STAND_IN}(\\d{3})(?!\\d)`, 'g');

/**
 * A preview's text as the page gets it: numbers masked, a stand-in too where masking alone would
 * leave it (joined to a letter: `255711111198x`), so the page never shows a made-up number.
 */
function maskShown(text: string): string {
  return maskNumbersInText(text.replace(STAND_IN, '$1****$2'));
}

function fixtureNames(source: ConsoleSource, sourceName: string): string[] {
  return source.fixturesDir === undefined ? [] : examplePayloads(source.fixturesDir, sourceName).slice(0, MAX_CHOICES);
}

function exampleHeaders(source: ConsoleSource, sourceName: string, name: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...fixtureHeaders(sourceName, join(examplesDirectory(source.fixturesDir!, sourceName)!, name)),
  };
}

function readFixture(source: ConsoleSource, sourceName: string, name: string): string {
  return readFileSync(join(examplesDirectory(source.fixturesDir!, sourceName)!, name), 'utf8');
}
