/**
 * A small markdown subset for the event catalog's descriptions, parsed into plain data that
 * markdown-view.tsx turns into React elements. Nothing here produces HTML: every character of the
 * source ends up as text (React escapes it), so a `<script>` in a description shows as those
 * characters. Recognised: paragraphs (separated by a blank line), `- ` / `* ` and `1. ` lists,
 * `code`, **bold**, *emphasis* and [links](https://…); anything else stays as written.
 */

export type Inline =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'code'; readonly text: string }
  | { readonly kind: 'strong'; readonly children: readonly Inline[] }
  | { readonly kind: 'em'; readonly children: readonly Inline[] }
  | { readonly kind: 'link'; readonly href: string; readonly children: readonly Inline[] };

export type Block =
  | { readonly kind: 'paragraph'; readonly children: readonly Inline[] }
  | { readonly kind: 'list'; readonly ordered: boolean; readonly items: readonly (readonly Inline[])[] };

/** The longest source parsed; a longer one is cut there (a description is a sentence or a few). */
export const MARKDOWN_CHARS_MAX = 10_000;

const BULLET = /^\s*[-*]\s+(.*)$/;
const NUMBERED = /^\s*\d{1,9}[.)]\s+(.*)$/;

/** The blocks of `source`: runs of list items become lists, other runs of lines paragraphs. */
export function parseMarkdown(source: string): Block[] {
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  let list: { ordered: boolean; items: string[] } | undefined;
  const flushParagraph = () => {
    if (paragraph.length > 0) blocks.push({ kind: 'paragraph', children: parseInline(paragraph.join(' ')) });
    paragraph = [];
  };
  const flushList = () => {
    if (list !== undefined) blocks.push({ kind: 'list', ordered: list.ordered, items: list.items.map(parseInline) });
    list = undefined;
  };
  for (const line of source.slice(0, MARKDOWN_CHARS_MAX).split(/\r?\n/)) {
    const bullet = BULLET.exec(line);
    const numbered = bullet === null ? NUMBERED.exec(line) : null;
    const item = bullet ?? numbered;
    if (line.trim() === '') {
      flushParagraph();
      flushList();
    } else if (item !== null) {
      const ordered = numbered !== null;
      flushParagraph();
      if (list !== undefined && list.ordered !== ordered) flushList();
      list ??= { ordered, items: [] };
      list.items.push(item[1] ?? '');
    } else if (list !== undefined && /^\s+/.test(line)) {
      // An indented line continues the list's last item.
      const last = list.items.length - 1;
      list.items[last] = `${list.items[last] ?? ''} ${line.trim()}`;
    } else {
      flushList();
      paragraph.push(line.trim());
    }
  }
  flushParagraph();
  flushList();
  return blocks;
}

/** Only these link targets are kept; any other (`javascript:`, `data:` …) leaves its text unlinked. */
export function safeHref(href: string): string | undefined {
  const trimmed = href.trim();
  if (/^(https?:\/\/|mailto:)/i.test(trimmed)) return trimmed;
  if (/^\/(?!\/)/.test(trimmed) || trimmed.startsWith('#')) return trimmed;
  return undefined;
}

/** The inline spans of one paragraph or list item. */
export function parseInline(text: string): Inline[] {
  const result: Inline[] = [];
  let plain = '';
  const flush = () => {
    if (plain !== '') result.push({ kind: 'text', text: plain });
    plain = '';
  };
  let index = 0;
  while (index < text.length) {
    const char = text[index] ?? '';
    const rest = text.slice(index);
    if (char === '\\' && index + 1 < text.length && /[\\`*_[\]()]/.test(text[index + 1] ?? '')) {
      plain += text[index + 1] ?? '';
      index += 2;
      continue;
    }
    if (char === '`') {
      const end = text.indexOf('`', index + 1);
      if (end > index + 1) {
        flush();
        result.push({ kind: 'code', text: text.slice(index + 1, end) });
        index = end + 1;
        continue;
      }
    }
    if (rest.startsWith('**')) {
      const end = text.indexOf('**', index + 2);
      if (end > index + 2) {
        flush();
        result.push({ kind: 'strong', children: parseInline(text.slice(index + 2, end)) });
        index = end + 2;
        continue;
      }
    }
    if ((char === '*' || char === '_') && text[index + 1] !== char && text[index + 1] !== ' ') {
      const end = text.indexOf(char, index + 1);
      // `_` inside a word (snake_case names) is not emphasis.
      const wordBefore = char === '_' && /\w/.test(text[index - 1] ?? '');
      if (end > index + 1 && text[end - 1] !== ' ' && !wordBefore && !(char === '_' && /\w/.test(text[end + 1] ?? ''))) {
        flush();
        result.push({ kind: 'em', children: parseInline(text.slice(index + 1, end)) });
        index = end + 1;
        continue;
      }
    }
    if (char === '[') {
      const link = /^\[([^\]]+)\]\(([^)\s]+)\)/.exec(rest);
      if (link !== null) {
        const href = safeHref(link[2] ?? '');
        const children = parseInline(link[1] ?? '');
        flush();
        if (href === undefined) result.push(...children);
        else result.push({ kind: 'link', href, children });
        index += link[0].length;
        continue;
      }
    }
    plain += char;
    index += 1;
  }
  flush();
  return mergeText(result);
}

/** Adjacent text spans joined (an unsafe link's text lands beside plain text). */
function mergeText(spans: Inline[]): Inline[] {
  const merged: Inline[] = [];
  for (const span of spans) {
    const last = merged.at(-1);
    if (span.kind === 'text' && last?.kind === 'text') merged[merged.length - 1] = { kind: 'text', text: last.text + span.text };
    else merged.push(span);
  }
  return merged;
}
