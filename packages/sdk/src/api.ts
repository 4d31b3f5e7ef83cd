import { operations } from './generated/openapi.js';
import { type ListPage, PagedList } from './pagination.js';
import type { Credential, RequestOptions, RetryMode, Transport } from './transport.js';
import type { OperationKey, PathParams, QueryParams, RequestBody, ResponseBody } from './types.js';

/** Operations whose body is a form (`application/x-www-form-urlencoded`), as the browser posts it; JSON for the rest. */
const FORM_BODIES: ReadonlySet<string> = new Set(
  Object.values(operations)
    .filter((spec) => spec.body === 'form')
    .map((spec) => `${spec.method} ${spec.path}`),
);

type EmptyRecord = Record<string, never>;

/** The parts of one call; `path` and `body` are required exactly when the operation has them. */
export type CallInput<K extends OperationKey> = (PathParams<K> extends EmptyRecord ? { path?: undefined } : { path: PathParams<K> }) &
  (RequestBody<K> extends undefined ? { body?: undefined } : { body: RequestBody<K> }) & { query?: QueryParams<K> | undefined };

/** Calls operations by their `"METHOD /path"` key, so only paths and fields the API has compile. */
export class Api {
  readonly transport: Transport;
  readonly credential: Credential;

  constructor(transport: Transport, credential: Credential) {
    this.transport = transport;
    this.credential = credential;
  }

  /** The same transport with a session token as the credential, for the end-user routes. */
  withSession(sessionToken: string): Api {
    if (typeof sessionToken !== 'string' || sessionToken === '') throw new TypeError('sessionToken must be a session token ("svc_ses_…").');
    return new Api(this.transport, { kind: 'session', token: sessionToken });
  }

  call<K extends OperationKey>(key: K, input: CallInput<K>, options?: RequestOptions): Promise<ResponseBody<K>> {
    const [method, template] = key.split(' ') as [RequestMethod, string];
    const parameters = (input.path ?? {}) as Readonly<Record<string, string>>;
    const path = template.replace(/\{(\w+)\}/g, (_match, name: string) => {
      const value = parameters[name];
      // An empty id would name another route (GET /v1/wallets/ is the list), so it is refused here.
      if (typeof value !== 'string' || value === '') throw new TypeError(`${name} must be a non-empty string.`);
      return encodeURIComponent(value);
    });
    // Every POST is stored for replay under its Idempotency-Key, those whose answers hold a session
    // or refresh token too (sealed; docs/api.md, "Idempotency"): a retry after a lost answer gets the
    // same answer, never a second session or a second use of a refresh token.
    const retry: RetryMode = method === 'GET' ? 'read' : method === 'POST' ? 'keyed' : 'unkeyed';
    return this.transport.request<ResponseBody<K>>(
      {
        method,
        path,
        credential: this.credential,
        retry,
        ...(input.query === undefined ? {} : { query: input.query }),
        ...(input.body === undefined ? {} : { body: input.body }),
        ...(FORM_BODIES.has(key) ? { bodyEncoding: 'form' as const } : {}),
      },
      options,
    );
  }

  /** A list operation as a `PagedList`: `await` for one page, `for await` for every item. */
  list<K extends OperationKey>(
    key: K,
    input: CallInput<K>,
    options: RequestOptions | undefined,
    cursor: (item: ListItem<K>) => string,
  ): PagedList<ListItem<K>> {
    type T = ListItem<K>;
    const query = (input.query ?? {}) as { starting_after?: string };
    return new PagedList<T>(
      (startingAfter) =>
        this.call(
          key,
          { ...input, query: { ...query, ...(startingAfter === undefined ? {} : { starting_after: startingAfter }) } },
          options,
        ) as Promise<ListPage<T>>,
      cursor,
      query.starting_after,
    );
  }
}

/** The item type of a list operation's `data`. */
export type ListItem<K extends OperationKey> = ResponseBody<K> extends { data: Array<infer Item> } ? Item : never;

type RequestMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export const byId = (item: { id: string }): string => item.id;
