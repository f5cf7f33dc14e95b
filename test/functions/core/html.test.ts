import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../../../functions/core/html';

describe('escapeHtml', () => {
  it('escapes the five characters that end a text node or a quoted attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });

  it('leaves every other character as it is', () => {
    expect(escapeHtml('Disk 94% full on db-01 — ✓')).toBe('Disk 94% full on db-01 — ✓');
  });
});
