import type { z } from 'zod';
import { describeIssues } from '../../functions/core/config/parse';
import { HttpError } from './error';

/**
 * A request's query, path parameters or body read by its zod schema, or an `HttpError` (400 unless
 * `status` says otherwise) listing each problem as `name: problem`.
 *
 * @example
 * ```ts
 * const query = parseRequest(RecordListQuery, queryObject(new URL(request.url, 'http://local').searchParams));
 * ```
 */
export function parseRequest<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  { status = 400 }: { readonly status?: number } = {},
): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new HttpError(status, describeIssues(parsed.error.issues).join('; '));
  return parsed.data;
}

/** Query parameters as an object for {@link parseRequest}: empty ones count as absent, a repeated one as its last value. */
export function queryObject(parameters: URLSearchParams): Record<string, string> {
  return Object.fromEntries([...parameters].filter(([, value]) => value !== ''));
}
