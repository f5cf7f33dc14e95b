/** An error's name for a log line or a record: never its message, which may carry a secret or a number. */
export function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
