/**
 * A request a local HTTP server (the sandbox SMS service, the console's API) refuses: the
 * server answers with `status` and `message` in its own error body. One class, because every
 * caller handles every status the same way; the status says which refusal it is.
 *
 * `message` is written for the client, so it must never contain a secret.
 *
 * @example
 * ```ts
 * throw new HttpError(404, `no route "${routeId}"`);
 * throw new HttpError(405, 'Method PUT not allowed on /v1/sms/send; use POST', { headers: { allow: 'POST' } });
 * ```
 */
export class HttpError extends Error {
  public readonly status: number;
  /** Extra response headers, e.g. `Allow` on a 405. */
  public readonly headers: Readonly<Record<string, string>>;

  public constructor(
    status: number,
    message: string,
    { headers = {}, cause }: { readonly headers?: Readonly<Record<string, string>>; readonly cause?: unknown } = {},
  ) {
    super(message, { cause });
    this.name = 'HttpError';
    this.status = status;
    this.headers = headers;
  }
}
