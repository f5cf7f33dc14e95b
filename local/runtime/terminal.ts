/**
 * What a terminal would act on instead of showing: C0 controls (ESC, CR, BS, …), DEL, C1 controls
 * (0x9b is a one-byte CSI), the line and paragraph separators, and the bidirectional overrides
 * that reorder what is shown.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it escapes
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` with every control character shown as an escape (`\x1b` as `\u001b`, a newline as `\n`),
 * so that text from outside (a route name from a URL, a reason, a library's line) can neither
 * move the cursor, clear the screen nor start a line of its own. `keepNewlines` leaves `\n` alone
 * for text that is several lines on purpose.
 *
 * @example
 * ```ts
 * escapeControlCharacters('\x1b[2J\nforged'); // '\\u001b[2J\\nforged'
 * ```
 */
export function escapeControlCharacters(
  text: string,
  { keepNewlines = false }: { readonly keepNewlines?: boolean } = {},
): string {
  return text.replace(CONTROL_CHARACTERS, (character) => {
    if (keepNewlines && character === '\n') return character;
    return NAMED_ESCAPES[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

export interface Terminal {
  /**
   * Prints text without redaction: the banner, which shows the local token on purpose. Its
   * lines stay lines; other control characters are escaped.
   */
  printVerbatim(text: string): void;
  /** Prints one line to stdout after redaction, with control characters (newlines too) escaped. */
  print(line: string): void;
  /** Prints one line to stderr after redaction, with control characters (newlines too) escaped. */
  printError(line: string): void;
}

/**
 * Where the runtime's lines reach the operator: no line gets there without going through
 * `redact`, and none carries a control character the terminal would act on
 * (`escapeControlCharacters`): this is the one place output is made safe to show.
 *
 * @example
 * ```ts
 * const terminal = createTerminal({ redact: createRedactor(secretValues) });
 * terminal.print(formatWebhook(report));
 * ```
 */
export function createTerminal({ redact }: { readonly redact: (text: string) => string }): Terminal {
  const originals = {
    stdout: process.stdout.write.bind(process.stdout),
    stderr: process.stderr.write.bind(process.stderr),
  };

  return {
    printVerbatim: (text) => {
      const shown = escapeControlCharacters(text, { keepNewlines: true });
      originals.stdout(shown.endsWith('\n') ? shown : `${shown}\n`);
    },
    // Redaction first: escaping could split a secret or a phone number it would have found.
    print: (line) => void originals.stdout(`${escapeControlCharacters(redact(line))}\n`),
    printError: (line) => void originals.stderr(`${escapeControlCharacters(redact(line))}\n`),
  };
}
