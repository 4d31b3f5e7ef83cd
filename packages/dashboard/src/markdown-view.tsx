import { type ReactNode, useMemo } from 'react';
import { type Block, type Inline, parseMarkdown } from './markdown.js';

/**
 * A description written in the small markdown subset of markdown.ts, as React elements. Only text
 * nodes and a fixed set of elements are made (no `dangerouslySetInnerHTML`), so no description can
 * inject markup; links open in a new tab without the page as their opener.
 */
export function Markdown(props: { source: string; className?: string }) {
  const blocks = useMemo(() => parseMarkdown(props.source), [props.source]);
  return <div className={props.className === undefined ? 'markdown' : `markdown ${props.className}`}>{blocks.map(block)}</div>;
}

function block(value: Block, key: number): ReactNode {
  if (value.kind === 'paragraph') return <p key={key}>{inlines(value.children)}</p>;
  const items = value.items.map((item, index) => <li key={index}>{inlines(item)}</li>);
  return value.ordered ? <ol key={key}>{items}</ol> : <ul key={key}>{items}</ul>;
}

function inlines(spans: readonly Inline[]): ReactNode[] {
  return spans.map((span, key) => {
    switch (span.kind) {
      case 'text':
        return span.text;
      case 'code':
        return <code key={key}>{span.text}</code>;
      case 'strong':
        return <strong key={key}>{inlines(span.children)}</strong>;
      case 'em':
        return <em key={key}>{inlines(span.children)}</em>;
      case 'link':
        return (
          <a key={key} href={span.href} target="_blank" rel="noopener noreferrer">
            {inlines(span.children)}
          </a>
        );
    }
  });
}
