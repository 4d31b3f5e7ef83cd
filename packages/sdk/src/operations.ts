import type { Api, CallInput, ListItem } from './api.js';
import { operations } from './generated/openapi.js';
import type { PagedList } from './pagination.js';
import type { RequestOptions } from './transport.js';
import type { OperationKey, ResponseBody } from './types.js';

/**
 * One method per operation of the API, named by its `operationId` in `GET /v1/openapi.json` and
 * generated from it (`generated/openapi.ts`), so every route the server documents has one:
 *
 * ```ts
 * const page = await svc.operations.listOrganizations({ query: { limit: 10 } });
 * const member = await svc.operations.addOrganizationMember({ path: { id: org.id }, body: { user_id, role: 'admin' } });
 * for await (const entry of svc.operations.listAuditLogs()) console.log(entry.action);
 * ```
 *
 * Each takes `{ path, query, body }` as the operation has them (the API's own names, docs/api.md)
 * and `RequestOptions`; it retries, sends idempotency keys and throws `ServiceError` exactly as the
 * hand-written namespaces do, since both go through the same `Api.call`. A list that pages with
 * `starting_after` answers a `PagedList`: `await` it for one page, `for await` for every item.
 */
export type OperationId = keyof typeof operations;

type Spec<Id extends OperationId> = (typeof operations)[Id];
/** The `"METHOD /path"` key of an operation, under which its types are generated. */
export type OperationKeyOf<Id extends OperationId> = Extract<OperationKey, `${Spec<Id>['method']} ${Spec<Id>['path']}`>;

/** Operations a secret key may call (`secret`, `any`, `public`): `SvcClient.operations`. */
export type SecretKeyOperationId = { [Id in OperationId]: Spec<Id>['credential'] extends 'session' ? never : Id }[OperationId];
/** Operations a session token may call (`session`, `any`, `public`): `SvcSessionClient.operations`. */
export type SessionOperationId = { [Id in OperationId]: Spec<Id>['credential'] extends 'secret' ? never : Id }[OperationId];

type Input<Id extends OperationId> = CallInput<OperationKeyOf<Id>>;
/** The input may be left out when nothing in it is required. */
type Arguments<Id extends OperationId> =
  Record<string, never> extends Input<Id> ? [input?: Input<Id>, options?: RequestOptions] : [input: Input<Id>, options?: RequestOptions];
type Result<Id extends OperationId> = Spec<Id>['list'] extends true
  ? PagedList<ListItem<OperationKeyOf<Id>>>
  : Promise<ResponseBody<OperationKeyOf<Id>>>;

export type OperationMethods<Id extends OperationId> = { readonly [I in Id]: (...args: Arguments<I>) => Result<I> };

/**
 * The field `starting_after` names in a list whose items are not identified by `id`: a member by
 * its user, a membership of the session user by its organization, a domain by its name (the
 * server's summaries say so).
 */
const CURSORS: Partial<Record<OperationId, string>> = {
  listOrganizationMembers: 'user_id',
  listCurrentUserOrganizations: 'organization_id',
  listOrganizationDomains: 'domain',
};

/** The methods of the operations `credentials` admits, calling through `api`. */
export function operationMethods<Id extends OperationId>(
  api: Api,
  credentials: ReadonlySet<(typeof operations)[OperationId]['credential']>,
): OperationMethods<Id> {
  const methods: Record<string, (input?: object, options?: RequestOptions) => unknown> = {};
  for (const [id, spec] of Object.entries(operations) as Array<[OperationId, Spec<OperationId>]>) {
    if (!credentials.has(spec.credential)) continue;
    const key = `${spec.method} ${spec.path}` as OperationKey;
    const cursorField = CURSORS[id] ?? 'id';
    methods[id] = spec.list
      ? (input = {}, options) =>
          api.list(key, input as CallInput<OperationKey>, options, (item) => String((item as Record<string, unknown>)[cursorField]))
      : (input = {}, options) => api.call(key, input as CallInput<OperationKey>, options);
  }
  return Object.freeze(methods) as unknown as OperationMethods<Id>;
}
