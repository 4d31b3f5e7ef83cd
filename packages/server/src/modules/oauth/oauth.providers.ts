/**
 * The providers a project can configure: three built in, and any number of generic OpenID
 * Connect providers under a key of the project's choosing.
 */
export type ProviderKind = 'google' | 'apple' | 'github' | 'oidc';

export const BUILT_IN_PROVIDERS = ['google', 'apple', 'github'] as const;
export type BuiltInProvider = (typeof BUILT_IN_PROVIDERS)[number];

/** Keys of generic providers: lower-case letters, digits, `_` and `-`, starting with a letter. */
export const PROVIDER_KEY_PATTERN = /^[a-z][a-z0-9_-]{1,63}$/;

/** What a sign-in asks for when the configuration names no scopes. */
export const DEFAULT_SCOPES: Readonly<Record<ProviderKind, readonly string[]>> = {
  google: ['openid', 'email', 'profile'],
  apple: ['openid', 'email', 'name'],
  github: ['read:user', 'user:email'],
  oidc: ['openid', 'email', 'profile'],
};

/** Kinds that speak OpenID Connect: an ID token, a nonce, `openid` always among the scopes. */
export function isOpenIdConnect(kind: ProviderKind): boolean {
  return kind !== 'github';
}

export function builtInKind(provider: string): BuiltInProvider | undefined {
  return (BUILT_IN_PROVIDERS as readonly string[]).includes(provider) ? (provider as BuiltInProvider) : undefined;
}
