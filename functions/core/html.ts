const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Escapes text for an HTML text node or a quoted attribute value: the acknowledge page and the
 * console both put webhook and store values into HTML.
 *
 * @example
 * ```ts
 * escapeHtml('<b>"db-1"</b>'); // '&lt;b&gt;&quot;db-1&quot;&lt;/b&gt;'
 * ```
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character] ?? character);
}
