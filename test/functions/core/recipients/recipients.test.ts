import { describe, expect, it } from 'vitest';
import { compileRecipients, RecipientEntryKind, resolveRecipients } from '../../../../functions/core/recipients';
import { buildScope, createTemplateEngine, TemplateError } from '../../../../functions/core/templates';

const engine = createTemplateEngine();
const FULL_NUMBER = /\d{7,}/;

const configError = (entries: readonly string[]): Error => {
  try {
    compileRecipients(entries, engine);
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return error as Error;
  }
  throw new Error('expected compileRecipients to throw');
};

const resolve = (entries: readonly string[], body: unknown) =>
  resolveRecipients(compileRecipients(entries, engine), buildScope({ body, headers: {} }));

describe('compileRecipients', () => {
  it('normalises literals at compile time and keeps templates', () => {
    const compiled = compileRecipients(
      ['0712 345 678', '{{ customer.phone }}', '0754321000; +255 782 000 111'],
      engine,
    );
    expect(compiled.engine).toBe(engine);
    expect(compiled.entries).toMatchObject([
      { kind: RecipientEntryKind.Literal, numbers: ['255712345678'], display: '2557****678' },
      { kind: RecipientEntryKind.Template, display: '{{ customer.phone }}' },
      {
        kind: RecipientEntryKind.Literal,
        numbers: ['255754321000', '255782000111'],
        display: '2557****000, 2557****111',
      },
    ]);
  });

  it.each([
    [['0712345678', '+254712345678'], 1, 'not a Tanzanian number (+254…)'],
    [['0222123456'], 0, 'not a mobile number (landline)'],
    [['0712345678, 071234'], 0, 'too short'],
    [['', '0712345678'], 0, 'empty'],
    [[' , ; '], 0, 'empty'],
    [['call me'], 0, 'not a phone number'],
  ])('rejects the invalid literal in %j', (entries, index, reason) => {
    const error = configError(entries);
    expect(error.message).toBe(`[${index}] ${reason}`);
    expect(error.message).not.toMatch(FULL_NUMBER);
  });

  it('rejects a template that does not compile, with the TemplateError as cause', () => {
    const error = configError(['0712345678', '{{ customer.phone | monie }}']);
    expect(error.message).toBe('[1] unknown filter "monie"');
    expect(error.cause).toBeInstanceOf(TemplateError);
  });

  it('treats {% as a template too', () => {
    const compiled = compileRecipients(['{% if vip %}0712345678{% endif %}'], engine);
    expect(compiled.entries[0]?.kind).toBe(RecipientEntryKind.Template);
  });

  it('masks numbers written inside a template source', () => {
    const compiled = compileRecipients(["{{ customer.phone | default: '0712345678' }}"], engine);
    expect(compiled.entries[0]?.display).toBe("{{ customer.phone | default: '2557****678' }}");
  });
});

describe('resolveRecipients', () => {
  it('renders templated entries and normalises them', () => {
    expect(
      resolve(['{{ customer.phone }}', '{{ billing.phone }}'], {
        customer: { phone: '0754 321 000' },
        billing: { phone: 255782000111 },
      }),
    ).toEqual({
      numbers: ['255754321000', '255782000111'],
      dropped: [],
    });
  });

  it('splits a rendered entry on commas, semicolons and line breaks', () => {
    expect(
      resolve(["{{ on_call | join: ',' }}", '{{ team }}'], {
        on_call: ['0712345678', '+255 754 321 000'],
        team: '0782000111;0654321000\n0689123456\r\n',
      }),
    ).toEqual({
      numbers: ['255712345678', '255754321000', '255782000111', '255654321000', '255689123456'],
      dropped: [],
    });
  });

  it('removes duplicates, keeping the first occurrence order', () => {
    expect(
      resolve(['0754321000', '{{ a }}', '0712345678', '{{ b }}'], {
        a: '0712 345 678, 255754321000',
        b: '+255782000111',
      }).numbers,
    ).toEqual(['255754321000', '255712345678', '255782000111']);
  });

  it('drops invalid rendered numbers with the template as entry, never the number', () => {
    const result = resolve(['0712345678', '{{ phones }}', '{{ customer.phone }}'], {
      phones: '+254712345678, 0222123456, 0754321000, 07123',
    });
    expect(result).toEqual({
      numbers: ['255712345678', '255754321000'],
      dropped: [
        { entry: '{{ phones }}', reason: 'not a Tanzanian number (+254…)' },
        { entry: '{{ phones }}', reason: 'not a mobile number (landline)' },
        { entry: '{{ phones }}', reason: 'too short' },
        { entry: '{{ customer.phone }}', reason: 'rendered empty' },
      ],
    });
    for (const drop of result.dropped) {
      expect(drop.entry).not.toMatch(FULL_NUMBER);
      expect(drop.reason).not.toMatch(FULL_NUMBER);
    }
  });

  it.each([[''], ['   '], [' , ;\n'], [null]])('drops an entry rendering %j as "rendered empty"', (phone) => {
    expect(resolve(['{{ phone }}'], { phone }).dropped).toEqual([{ entry: '{{ phone }}', reason: 'rendered empty' }]);
  });

  it('drops an entry whose render fails, masking what the message quotes', () => {
    const result = resolve(['{{ phone | append }}'], { phone: '0712345678' });
    expect(result.numbers).toEqual([]);
    expect(result.dropped).toHaveLength(1);
    expect(result.dropped[0]?.reason).toMatch(/^render failed: /);
  });

  it('returns no numbers without failing when nothing is valid', () => {
    expect(resolve([], {})).toEqual({ numbers: [], dropped: [] });
    expect(resolve(['{{ x }}'], {}).numbers).toEqual([]);
  });

  it('works with scalar and array bodies through payload', () => {
    expect(resolve(['{{ payload }}'], '0712345678').numbers).toEqual(['255712345678']);
    expect(
      resolve(["{{ payload | map: 'phone' | join: ',' }}"], [{ phone: '0712345678' }, { phone: '0754321000' }]).numbers,
    ).toEqual(['255712345678', '255754321000']);
  });
});
