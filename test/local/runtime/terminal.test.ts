import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTerminal, escapeControlCharacters } from '../../../local/runtime/terminal';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Everything the terminal writes to `stream`, collected; the spy must exist before the terminal. */
function spyOn(stream: NodeJS.WriteStream): string[] {
  const written: string[] = [];
  vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  return written;
}

describe('escapeControlCharacters', () => {
  it('shows escape sequences, line breaks and other controls as text', () => {
    expect(escapeControlCharacters('\x1b[2J\x1b]0;title\x07')).toBe('\\u001b[2J\\u001b]0;title\\u0007');
    expect(escapeControlCharacters('a\nb\rc\td\b\x7f\0')).toBe('a\\nb\\rc\\td\\u0008\\u007f\\u0000');
    // A one-byte CSI, the Unicode line separators and a right-to-left override.
    expect(escapeControlCharacters('\u009b2J \u2028 \u2029 \u202eevil')).toBe('\\u009b2J \\u2028 \\u2029 \\u202eevil');
  });

  it('leaves printable text alone, accents and emoji included', () => {
    const text = 'notify      SENT    to 2557****678  1 segment  20 credits, balance 9980 — café ✓ 🚀 C:\\data';
    expect(escapeControlCharacters(text)).toBe(text);
  });

  it('keeps line breaks when asked', () => {
    expect(escapeControlCharacters('one\n\x1b[1mtwo\n', { keepNewlines: true })).toBe('one\n\\u001b[1mtwo\n');
  });
});

describe('the terminal', () => {
  it('prints each line as one line, redacted then escaped', () => {
    const out = spyOn(process.stdout);
    const err = spyOn(process.stderr);
    const terminal = createTerminal({ redact: (text) => text.replace('s3cret', '[redacted]') });
    terminal.print('route \x1b[2Js3cret\n12:00:00  webhook  forged');
    terminal.printError('reason \r\x1b[Kgone');
    expect(out).toEqual(['route \\u001b[2J[redacted]\\n12:00:00  webhook  forged\n']);
    expect(err).toEqual(['reason \\r\\u001b[Kgone\n']);
  });

  it('keeps the banner on its lines and unredacted, with controls escaped', () => {
    const out = spyOn(process.stdout);
    const terminal = createTerminal({ redact: () => 'redacted' });
    terminal.printVerbatim('sms-relay\n  Token  abc\x1b[8m\n');
    expect(out).toEqual(['sms-relay\n  Token  abc\\u001b[8m\n']);
  });
});
