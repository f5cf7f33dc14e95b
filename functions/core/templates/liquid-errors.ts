import { TEMPLATE_LIMITS } from '../defaults';
import { TemplateError } from './errors';

/** LiquidJS's `Limiter` messages, and what each means for a template. */
const LIMITS: Readonly<Record<string, string>> = {
  'parse length limit exceeded': `parse limit exceeded: the template is longer than ${TEMPLATE_LIMITS.parseChars} characters`,
  'template render limit exceeded': `render limit exceeded: the template ran longer than ${TEMPLATE_LIMITS.renderMs} ms`,
  'memory alloc limit exceeded': `memory limit exceeded: the template built more than ${TEMPLATE_LIMITS.memory} characters or items`,
};

// LiquidJS appends the position as `, line:1, col:7`; nested errors can append it twice.
const TRAILING_LOCATION = /,\s*line:(\d+),\s*col:(\d+)$/;

/**
 * Turns whatever LiquidJS threw into a `TemplateError` with a short message.
 *
 * Unknown filters and tags are named in the message, so their position is left out of it
 * (it is still on `line`/`column`); other syntax errors keep ` (line 1, col 7)` because the
 * message alone rarely says where the problem is.
 */
export const toTemplateError = (error: unknown): TemplateError => {
  if (error instanceof TemplateError) return error;
  let message = error instanceof Error ? error.message : String(error);
  let line: number | undefined;
  let column: number | undefined;
  for (let match = TRAILING_LOCATION.exec(message); match; match = TRAILING_LOCATION.exec(message)) {
    // The innermost position is the first one appended, so the last one stripped wins.
    line = Number(match[1]);
    column = Number(match[2]);
    message = message.slice(0, match.index);
  }
  const location = line === undefined ? {} : { line, column };

  const unknownFilter = /^undefined filter: (.+)$/.exec(message);
  if (unknownFilter) {
    return new TemplateError(`unknown filter "${unknownFilter[1]}"`, { cause: error, ...location });
  }
  const unknownTag = /^tag "(.+)" not found$/.exec(message);
  if (unknownTag) {
    return new TemplateError(`unknown tag "${unknownTag[1]}"`, { cause: error, ...location });
  }
  const where = line === undefined ? '' : ` (line ${line}, col ${column})`;
  const limit = LIMITS[message];
  if (limit !== undefined) return new TemplateError(`${limit}${where}`, { cause: error, ...location });
  return new TemplateError(`${message}${where}`, { cause: error, ...location });
};
