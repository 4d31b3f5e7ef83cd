import { describe, expect, it } from 'vitest';
import { MARKDOWN_CHARS_MAX, parseInline, parseMarkdown, safeHref } from './markdown.js';

const text = (value: string) => ({ kind: 'text', text: value });

describe('markdown inline spans', () => {
  it('reads code, bold, emphasis and links', () => {
    expect(parseInline('A hold passed its `expires_at` uncaptured.')).toEqual([
      text('A hold passed its '),
      { kind: 'code', text: 'expires_at' },
      text(' uncaptured.'),
    ]);
    expect(parseInline('**Never** twice, *once*')).toEqual([
      { kind: 'strong', children: [text('Never')] },
      text(' twice, '),
      { kind: 'em', children: [text('once')] },
    ]);
    expect(parseInline('See [the API](https://example.com/api#events).')).toEqual([
      text('See '),
      { kind: 'link', href: 'https://example.com/api#events', children: [text('the API')] },
      text('.'),
    ]);
    expect(parseInline('**bold `code`**')).toEqual([{ kind: 'strong', children: [text('bold '), { kind: 'code', text: 'code' }] }]);
  });

  it('keeps code literal: no markup inside it', () => {
    expect(parseInline('`**not bold** [x](https://a.b)`')).toEqual([{ kind: 'code', text: '**not bold** [x](https://a.b)' }]);
  });

  it('leaves unmatched markers and snake_case names as written', () => {
    expect(parseInline('a * b ** c ` d [e]')).toEqual([text('a * b ** c ` d [e]')]);
    expect(parseInline('low_balance_threshold and captured_amount')).toEqual([text('low_balance_threshold and captured_amount')]);
    expect(parseInline('\\*not emphasis\\*')).toEqual([text('*not emphasis*')]);
  });

  it('links only http(s), mailto, and same-site paths; any other target keeps its text unlinked', () => {
    expect(safeHref('https://example.com')).toBe('https://example.com');
    expect(safeHref('mailto:ops@example.com')).toBe('mailto:ops@example.com');
    expect(safeHref('/dashboard/events')).toBe('/dashboard/events');
    expect(safeHref('#top')).toBe('#top');
    for (const href of ['javascript:alert(1)', 'JAVASCRIPT:alert(1)', 'data:text/html,<b>', '//evil.example', 'vbscript:x', 'relative'])
      expect(safeHref(href), href).toBeUndefined();
    expect(parseInline('[click](javascript:alert(1)) here')).toEqual([text('click) here')]);
    expect(parseInline('[click](data:text/html;base64,PHNjcmlwdD4=)')).toEqual([text('click')]);
  });

  it('makes no markup of HTML: tags stay text (React escapes them when drawn)', () => {
    const source = '<img src=x onerror=alert(1)> <script>alert(1)</script>';
    expect(parseMarkdown(source)).toEqual([{ kind: 'paragraph', children: [text(source)] }]);
  });
});

describe('markdown blocks', () => {
  it('splits paragraphs on blank lines and joins the lines of one', () => {
    expect(parseMarkdown('First line\nsame paragraph.\n\nSecond.')).toEqual([
      { kind: 'paragraph', children: [text('First line same paragraph.')] },
      { kind: 'paragraph', children: [text('Second.')] },
    ]);
    expect(parseMarkdown('')).toEqual([]);
  });

  it('reads bullet and numbered lists, with continued items', () => {
    expect(parseMarkdown('Reasons:\n- `user`: the user\n* **admin**\n  with a key\n\n1. one\n2) two')).toEqual([
      { kind: 'paragraph', children: [text('Reasons:')] },
      {
        kind: 'list',
        ordered: false,
        items: [
          [{ kind: 'code', text: 'user' }, text(': the user')],
          [{ kind: 'strong', children: [text('admin')] }, text(' with a key')],
        ],
      },
      { kind: 'list', ordered: true, items: [[text('one')], [text('two')]] },
    ]);
  });

  it('reads at most MARKDOWN_CHARS_MAX characters', () => {
    const [paragraph] = parseMarkdown('a'.repeat(MARKDOWN_CHARS_MAX + 50));
    expect(paragraph).toEqual({ kind: 'paragraph', children: [text('a'.repeat(MARKDOWN_CHARS_MAX))] });
  });
});
