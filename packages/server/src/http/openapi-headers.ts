import type { RouteCredential } from '../lib/principal.js';

/**
 * The header parameters the OpenAPI document (http/openapi.ts) declares on every route of a kind,
 * read from the same route options the server applies: `Idempotency-Key` on every POST
 * (http/idempotency.ts, docs/adr/0004-idempotency.md), and the end-user headers on every route that
 * takes a secret key (http/end-user.ts).
 */

/** The idempotency a route applies (`config.idempotency`, http/idempotency.ts), as much as the document says of it. */
export interface RouteKeying {
  readonly mode?: 'request' | 'off';
  readonly retention?: 'day' | 'forever';
  readonly bodyKey?: boolean;
  readonly claim?: 'request' | 'ledger' | 'movement';
}

const KEY_RULES =
  'The same key with the same request replays the first status and body, with `Idempotent-Replayed: true`; with another request, ' +
  '422 `idempotency_key_reused`; while the first still runs, 409 `idempotency_key_in_use`. 1 to 255 visible ASCII characters ' +
  '(docs/api.md section 1).';

/**
 * What `Idempotency-Key` does on a POST, read from the same route options the hooks apply
 * (http/idempotency.ts, docs/adr/0004-idempotency.md). Every POST declares it: on the few that take
 * no key the description says the header is ignored and why.
 */
export function idempotencyKeyDescription(keying: RouteKeying, credential: RouteCredential): string {
  if (keying.mode === 'off') {
    return credential === 'public'
      ? 'Ignored: this route receives a form an identity provider makes the browser post, which carries no key.'
      : 'Ignored: this POST only reads, and a stored answer could outlive a revocation made since; send it again freely.';
  }
  if (keying.claim === 'movement') {
    return (
      "Makes the movement safe to retry. The key is the movement's own and is kept forever with the transaction or hold it made " +
      '(per wallet; per project for a transfer); the same movement sent under it inside a batch replays too. ' +
      (keying.bodyKey === true ? "May be sent as the body's `idempotency_key` instead; sent in both, they must be equal. " : '') +
      KEY_RULES
    );
  }
  const kept = keying.retention === 'forever' ? 'kept forever' : 'kept 24 hours';
  const scope = credential === 'session' ? 'per project and user' : 'per project';
  return `Makes the request safe to retry: the first answer under the key is stored with the change it made, ${kept}, ${scope}. ${KEY_RULES}`;
}

/** The end-user headers, read on a secret key's request only (http/end-user.ts, docs/architecture.md "End-user context"). */
const END_USER_PARAMETERS = [
  {
    name: 'X-End-User-IP',
    in: 'header',
    required: false,
    description:
      "The address of the end user this request is made for, when the secret key's holder calls on their behalf: rate limits, " +
      "log-in throttling, new sessions and audit entries use it instead of the connection's. One IPv4 or IPv6 address, else 400 " +
      "`parameter_invalid`. Ignored with a session token or the dashboard's cookie.",
    schema: { type: 'string', examples: ['203.0.113.7'] },
  },
  {
    name: 'X-End-User-Agent',
    in: 'header',
    required: false,
    description:
      "The end user's `User-Agent`, recorded on new sessions and audit entries instead of the caller's; cut at 500 characters. " +
      "Ignored with a session token or the dashboard's cookie.",
    schema: { type: 'string' },
  },
] as const;

/** The header parameters every route of its kind shares: `Idempotency-Key` on a POST, the end-user headers where a secret key is taken. */
export function sharedHeaderParameters(route: {
  method: string | readonly string[];
  credential: RouteCredential;
  idempotency: RouteKeying;
}): unknown[] {
  const methods = typeof route.method === 'string' ? [route.method] : route.method;
  const parameters: unknown[] = [];
  if (methods.includes('POST')) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: idempotencyKeyDescription(route.idempotency, route.credential),
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$' },
    });
  }
  if (route.credential === 'secret' || route.credential === 'any') parameters.push(...END_USER_PARAMETERS);
  return parameters;
}
