/**
 * The part of oidc-provider (a test-only dev dependency that ships no types) that the test
 * providers use: a provider built from a configuration, and its Node request handler.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface Configuration {
    readonly clients?: readonly Record<string, unknown>[];
    readonly jwks?: { readonly keys: readonly Record<string, unknown>[] };
    readonly cookies?: { readonly keys: readonly string[] };
    readonly claims?: Readonly<Record<string, readonly string[]>>;
    readonly scopes?: readonly string[];
    readonly features?: Readonly<Record<string, { readonly enabled: boolean }>>;
    readonly ttl?: Readonly<Record<string, number>>;
    readonly findAccount?: (
      context: unknown,
      id: string,
    ) =>
      { accountId: string; claims: () => Record<string, unknown> } | Promise<{ accountId: string; claims: () => Record<string, unknown> }>;
  }

  // eslint-disable-next-line no-restricted-syntax -- the package's own export is a default one
  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
