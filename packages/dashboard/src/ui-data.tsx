import { type ReactNode, useCallback, useEffect, useRef, useState } from 'react';
import type { ListPage } from '@svc/sdk';
import { operations } from './api.js';
import { Empty, ErrorBox, Loading } from './ui-layout.js';

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
