import { type ReactNode, useCallback, useEffect, useId, useRef, useState } from 'react';
import { type ListPage, ServiceError, SvcConnectionError } from '@svc/sdk';
import { operations } from './api.js';
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

export interface Resource<T> {
  readonly data: T | undefined;
  readonly error: unknown;
  readonly loading: boolean;
  readonly reload: () => void;
}

/**
 * Loads with `load` (an SDK call) at first and whenever one of `deps` changes, as `useEffect`
 * would; `reload` loads again. `load` undefined waits.
 */
export function useResource<T>(load: (() => PromiseLike<T>) | undefined, deps: readonly unknown[]): Resource<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true,
  });
  const [version, setVersion] = useState(0);
  const waiting = load === undefined;
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    const current = loadRef.current;
    if (current === undefined) return;
    let live = true;
    setState((previous) => ({ ...previous, loading: true, error: undefined }));
    current().then(
      (data) => live && setState({ data, error: undefined, loading: false }),
      (error: unknown) => live && setState({ data: undefined, error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [waiting, version, ...deps]);
  const reload = useCallback(() => setVersion((value) => value + 1), []);
  return { ...state, reload };
}

/** Shows loading, error (with retry) or the content of a resource. */
export function Loaded<T>(props: { resource: Resource<T>; children: (data: T) => ReactNode; label?: string }) {
  const { resource } = props;
  if (resource.error !== undefined) return <ErrorBox error={resource.error} retry={resource.reload} />;
  if (resource.data === undefined) return <Loading {...(props.label === undefined ? {} : { label: props.label })} />;
  return <>{props.children(resource.data)}</>;
}

/** A paged list's current page (`resource`) and the Pager's state and moves. */
export interface Paged<T> {
  readonly resource: Resource<ListPage<T>>;
  readonly page: number;
  readonly hasNewer: boolean;
  readonly hasOlder: boolean;
  readonly newer: () => void;
  readonly older: () => void;
}

/** One page of a paged list: loading, its error, `empty` when it has no items, or `children` of its items; then the Pager. */
export function PagedItems<T>(props: { list: Paged<T>; empty: ReactNode; children: (items: T[]) => ReactNode }) {
  return (
    <>
      <Loaded resource={props.list.resource}>
        {({ data }) => (data.length === 0 ? <Empty>{props.empty}</Empty> : props.children(data))}
      </Loaded>
      <Pager {...props.list} />
    </>
  );
}

/**
 * A column heading: its text; `{ number }` for a right-aligned column of numbers; `{ hidden }` for
 * one only screen readers announce (the column of a row's buttons).
 */
export type Column = string | { readonly number: string } | { readonly hidden: string };

/** A table of rows (`children`, the `<tr>`s) with a caption for screen readers and a heading per column; scrolls sideways when narrow. */
export function Table(props: { caption: string; columns: readonly Column[]; testId?: string; className?: string; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table data-testid={props.testId} className={props.className}>
        <caption className="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) =>
              typeof column === 'string' ? (
                <th key={column} scope="col">
                  {column}
                </th>
              ) : 'number' in column ? (
                <th key={column.number} scope="col" className="number">
                  {column.number}
                </th>
              ) : (
                <th key={column.hidden} scope="col">
                  <span className="visually-hidden">{column.hidden}</span>
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** The query of one page of a list: its size, and the cursor it starts after. */
export interface PageQuery {
  readonly limit: number;
  readonly starting_after?: string;
}

/**
 * A cursor-paged list (`limit` + `starting_after`): Newer and Older buttons walk the pages, the
 * cursors of the pages already seen are kept so "Newer" goes back exactly. `list` asks the SDK for
 * one page; the list starts again at its first page whenever one of `deps` changes.
 */
export function usePagedList<T extends object>(
  list: (page: PageQuery) => PromiseLike<ListPage<T>>,
  deps: readonly unknown[],
  options: { pageSize?: number; cursor?: (item: T) => string } = {},
): Paged<T> {
  const pageSize = options.pageSize ?? 20;
  const cursorOf = options.cursor ?? ((item: T) => (item as { id?: string }).id ?? '');
  const [cursors, setCursors] = useState<string[]>([]);
  const depsKey = JSON.stringify(deps);
  useEffect(() => setCursors([]), [depsKey]);
  const startingAfter = cursors.at(-1);
  const resource = useResource(
    () => list(startingAfter === undefined ? { limit: pageSize } : { limit: pageSize, starting_after: startingAfter }),
    [depsKey, pageSize, startingAfter],
  );
  const data = resource.data?.data;
  const last = data?.at(-1);
  const lastCursor = last === undefined ? '' : cursorOf(last);
  return {
    resource,
    page: cursors.length + 1,
    hasNewer: cursors.length > 0,
    hasOlder: resource.data?.has_more === true && lastCursor !== '',
    newer: () => setCursors((list) => list.slice(0, -1)),
    older: () => {
      if (lastCursor !== '') setCursors((list) => [...list, lastCursor]);
    },
  };
}

/** The filters of a list query that are set: an empty text field filters nothing. */
export function present<Q extends Readonly<Record<string, string | number | undefined>>>(
  query: Q,
): { [K in keyof Q]?: Exclude<Q[K], undefined | ''> } {
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined && value !== '')) as {
    [K in keyof Q]?: Exclude<Q[K], undefined | ''>;
  };
}

export function Pager(props: { page: number; hasNewer: boolean; hasOlder: boolean; newer: () => void; older: () => void }) {
  if (!props.hasNewer && !props.hasOlder) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" onClick={props.newer} disabled={!props.hasNewer}>
        ← Newer
      </button>
      <span aria-live="polite">Page {props.page}</span>
      <button type="button" onClick={props.older} disabled={!props.hasOlder}>
        Older →
      </button>
    </nav>
  );
}

/** A labelled search box that applies on Enter or on the button (and clears with Escape). */
export function SearchBox(props: { label: string; placeholder?: string; value: string; onSearch: (value: string) => void }) {
  const [text, setText] = useState(props.value);
  const id = useId();
  useEffect(() => setText(props.value), [props.value]);
  return (
    <form
      className="search"
      role="search"
      onSubmit={(event) => {
        event.preventDefault();
        props.onSearch(text.trim());
      }}
    >
      <label htmlFor={id}>{props.label}</label>
      <div className="search-row">
        <input
          id={id}
          type="search"
          value={text}
          placeholder={props.placeholder}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Escape') {
              setText('');
              props.onSearch('');
            }
          }}
        />
        <button type="submit">Search</button>
      </div>
    </form>
  );
}

/** A modal dialog on the native <dialog>: focus moves in, Escape closes, focus returns to the opener. */
export function Dialog(props: { title: string; open: boolean; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={props.onClose} onCancel={props.onClose}>
      {props.open ? (
        <>
          <h2 id={titleId}>{props.title}</h2>
          {props.children}
        </>
      ) : null}
    </dialog>
  );
}

/** An action's state and its `run` (`useAction`). */
export interface Action {
  readonly pending: boolean;
  readonly error: unknown;
  readonly run: (action: () => Promise<unknown>) => Promise<boolean>;
  readonly clearError: () => void;
}

/** Runs an action, with its pending state and its error. */
export function useAction(): Action {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = useCallback(async (action: () => Promise<unknown>): Promise<boolean> => {
    setPending(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (caught) {
      setError(caught);
      return false;
    } finally {
      setPending(false);
    }
  }, []);
  return { pending, error, run, clearError: () => setError(undefined) };
}

export function CopyButton(props: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard
          .writeText(props.value)
          .then(() => setCopied(true))
          .catch(() => setCopied(false));
      }}
    >
      {copied ? 'Copied' : (props.label ?? 'Copy')}
    </button>
  );
}

/** A secret shown once: selectable text, a copy button, and a plain warning. */
export function SecretOnce(props: { label: string; value: string }) {
  return (
    <div className="secret-once" role="status">
      <p>
        <strong>{props.label}</strong>: copy it now. It is shown only this once.
      </p>
      <div className="secret-row">
        <code className="secret" data-testid="secret-value">
          {props.value}
        </code>
        <CopyButton value={props.value} />
      </div>
    </div>
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

let eventTypes: Promise<string[]> | undefined;

/** The event types the service emits, from its catalog (`GET /v1/event-types`), read once a page load; empty until it answers. */
export function useEventTypes(): readonly string[] {
  const [types, setTypes] = useState<readonly string[]>([]);
  useEffect(() => {
    let live = true;
    eventTypes ??= operations.listEventTypes().then((catalog) => catalog.data.map((entry) => entry.type));
    eventTypes.then(
      (loaded) => live && setTypes(loaded),
      () => {
        eventTypes = undefined;
      },
    );
    return () => {
      live = false;
    };
  }, []);
  return types;
}
