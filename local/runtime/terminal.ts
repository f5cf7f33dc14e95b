type Write = NodeJS.WriteStream['write'];
export type StreamName = 'stdout' | 'stderr';

export interface Terminal {
  /** Prints text exactly as given: the banner, which shows the local token on purpose. */
  printVerbatim(text: string): void;
  /** Prints one line to stdout after redaction. */
  print(line: string): void;
  /** Prints one line to stderr after redaction. */
  printError(line: string): void;
  /**
   * Routes every complete line anyone else writes to stdout or stderr (the handlers' loggers,
   * libraries' warnings) through `onLine` instead.
   */
  capture(onLine: (line: string, stream: StreamName) => void): void;
  /** Passes on any unfinished line and puts the streams back. */
  restore(): void;
}

/**
 * Owns the process's stdout and stderr while the runtime runs, so that no line reaches the
 * terminal without going through `redact`.
 *
 * @example
 * ```ts
 * const terminal = createTerminal({ redact: createRedactor(secretValues) });
 * terminal.capture((line) => terminal.print(formatLine(line)));
 * console.log('{"level":"INFO","message":"sms",…}'); // reaches onLine, not the terminal
 * ```
 */
export function createTerminal({ redact }: { readonly redact: (text: string) => string }): Terminal {
  const streams = { stdout: process.stdout, stderr: process.stderr } as const;
  const originals: Record<StreamName, Write> = {
    stdout: process.stdout.write.bind(process.stdout) as Write,
    stderr: process.stderr.write.bind(process.stderr) as Write,
  };
  const partial: Record<StreamName, string> = { stdout: '', stderr: '' };
  let listener: ((line: string, stream: StreamName) => void) | undefined;

  const patch = (name: StreamName): void => {
    const replacement = (chunk: string | Uint8Array, encodingOrCallback?: unknown, callback?: unknown): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      const lines = (partial[name] + text).split('\n');
      partial[name] = lines.pop() ?? '';
      for (const line of lines) listener?.(line, name);
      const done = typeof encodingOrCallback === 'function' ? encodingOrCallback : callback;
      if (typeof done === 'function') process.nextTick(done as () => void);
      return true;
    };
    streams[name].write = replacement as Write;
  };

  return {
    printVerbatim: (text) => void originals.stdout(text.endsWith('\n') ? text : `${text}\n`),
    print: (line) => void originals.stdout(`${redact(line)}\n`),
    printError: (line) => void originals.stderr(`${redact(line)}\n`),
    capture: (onLine) => {
      listener = onLine;
      patch('stdout');
      patch('stderr');
    },
    restore: () => {
      for (const name of ['stdout', 'stderr'] as const) {
        if (partial[name] !== '') listener?.(partial[name], name);
        partial[name] = '';
        streams[name].write = originals[name];
      }
      listener = undefined;
    },
  };
}
