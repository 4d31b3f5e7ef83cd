import { checkedUrl, ConfigError, type Env, flag, type NodeEnv, nonEmpty } from './config-parsing.js';

/** Social and OpenID Connect sign-in (modules/oauth). */
export interface OAuthConfig {
  /** `OAUTH_ALLOW_INSECURE_HTTP=1`: `http://` provider addresses are allowed (development only). */
  readonly allowInsecureHttp: boolean;
  /** `OAUTH_ALLOW_PRIVATE=1`: provider addresses may be loopback or private (development and tests). */
  readonly allowPrivate: boolean;
  /** Where the built-in providers live; overridable so tests can point them at loopback servers. */
  readonly endpoints: OAuthEndpoints;
}

export interface OAuthEndpoints {
  /** `OAUTH_GOOGLE_ISSUER`, default `https://accounts.google.com`; discovered. */
  readonly googleIssuer: string;
  /** `OAUTH_APPLE_ISSUER`, default `https://appleid.apple.com`; discovered. */
  readonly appleIssuer: string;
  /** `OAUTH_GITHUB_URL`, default `https://github.com`: `/login/oauth/authorize` and `/login/oauth/access_token`. */
  readonly githubUrl: string;
  /** `OAUTH_GITHUB_API_URL`, default `https://api.github.com`: `/user` and `/user/emails`. */
  readonly githubApiUrl: string;
}

/** The `OAUTH_*` variables; the two development settings are refused in production. */
export function oauthConfig(env: Env, nodeEnv: NodeEnv): OAuthConfig {
  const allowInsecureHttp = flag(env, 'OAUTH_ALLOW_INSECURE_HTTP');
  const allowPrivate = flag(env, 'OAUTH_ALLOW_PRIVATE');
  for (const [name, on] of [
    ['OAUTH_ALLOW_INSECURE_HTTP', allowInsecureHttp],
    ['OAUTH_ALLOW_PRIVATE', allowPrivate],
  ] as const) {
    if (on && nodeEnv === 'production') throw new ConfigError(name, 'is a development setting and is refused when NODE_ENV=production');
  }
  const protocols = allowInsecureHttp ? ['https:', 'http:'] : ['https:'];
  const endpoint = (name: string, fallback: string) => {
    const value = nonEmpty(env[name]);
    return value === undefined ? fallback : checkedUrl(name, value, protocols).replace(/\/+$/, '');
  };
  return {
    allowInsecureHttp,
    allowPrivate,
    endpoints: {
      googleIssuer: endpoint('OAUTH_GOOGLE_ISSUER', 'https://accounts.google.com'),
      appleIssuer: endpoint('OAUTH_APPLE_ISSUER', 'https://appleid.apple.com'),
      githubUrl: endpoint('OAUTH_GITHUB_URL', 'https://github.com'),
      githubApiUrl: endpoint('OAUTH_GITHUB_API_URL', 'https://api.github.com'),
    },
  };
}
