import { type ReactNode, useEffect } from 'react';
import { ServiceError, SvcConnectionError } from '@svc/sdk';
import { jsonTokens, formatJson } from './format.js';
import { BASE, navigate } from './router.js';

/** A link that stays in the page: a real <a href> (keyboard, middle click, copy link), routed without a reload. */
export function Link(props: { to: string; children: ReactNode; className?: string; 'aria-current'?: 'page' | undefined }) {
  return (
    <a
      href={`${BASE}${props.to}`}
      className={props.className}
      aria-current={props['aria-current']}
      onClick={(event) => {
        if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        navigate(props.to);
      }}
    >
      {props.children}
    </a>
  );
}

/** A page: its title (also the document's), its actions, and for a page of one item the link back to its list (`back`). */
export function Page(props: { title: string; actions?: ReactNode; back?: { to: string; label: string }; children: ReactNode }) {
  useEffect(() => {
    document.title = `${props.title} · svc dashboard`;
  }, [props.title]);
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title" tabIndex={-1}>
          {props.title}
        </h1>
        {props.actions === undefined ? null : <div className="page-actions">{props.actions}</div>}
      </header>
      {props.back === undefined ? null : (
        <p>
          <Link to={props.back.to}>← {props.back.label}</Link>
        </p>
      )}
      {props.children}
    </section>
  );
}

export function Loading(props: { label?: string }) {
  return (
    <p className="state state-loading" role="status" aria-live="polite">
      {props.label ?? 'Loading…'}
    </p>
  );
}

export function Empty(props: { children: ReactNode }) {
  return <p className="state state-empty">{props.children}</p>;
}

function errorMessage(error: unknown): string {
  if (error instanceof SvcConnectionError) return 'The service did not answer. Check the connection and try again.';
  return error instanceof Error ? error.message : String(error);
}

/** An error and, with `retry`, a button to try again; nothing while `error` is undefined (an action that has not failed). */
export function ErrorBox(props: { error: unknown; retry?: () => void }) {
  const { error } = props;
  if (error === undefined) return null;
  const message = errorMessage(error);
  const code = error instanceof ServiceError ? error.code : undefined;
  return (
    <div className="state state-error" role="alert">
      <p>
        {message}
        {code === undefined ? null : <code className="error-code"> {code}</code>}
      </p>
      {props.retry === undefined ? null : (
        <button type="button" onClick={props.retry}>
          Try again
        </button>
      )}
    </div>
  );
}

/**
 * A panel of a page: a section titled by its `<h2>` (`id` names it for the section's label), with
 * `actions` beside the title when given.
 */
export function Panel(props: { id: string; title: ReactNode; titleClassName?: string; actions?: ReactNode; children: ReactNode }) {
  const title = (
    <h2 id={props.id} className={props.titleClassName}>
      {props.title}
    </h2>
  );
  return (
    <section className="panel" aria-labelledby={props.id}>
      {props.actions === undefined ? (
        title
      ) : (
        <div className="panel-header">
          {title}
          {props.actions}
        </div>
      )}
      {props.children}
    </section>
  );
}

export function JsonView(props: { value: unknown; label?: string }) {
  const text = formatJson(props.value);
  return (
    <pre className="json" aria-label={props.label ?? 'JSON'} tabIndex={0}>
      {jsonTokens(text).map((token, index) => (
        <span key={index} className={`json-${token.kind}`}>
          {token.text}
        </span>
      ))}
    </pre>
  );
}

export function StatusBadge(props: { status: string }) {
  return <span className={`badge badge-${props.status.replace(/[^a-z_]/g, '')}`}>{props.status}</span>;
}
