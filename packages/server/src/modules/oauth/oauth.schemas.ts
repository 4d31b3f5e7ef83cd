import { type Static, Type } from '@sinclair/typebox';
import { StrictObject } from '../../lib/schemas.js';
import { MfaChallengeSchema } from '../mfa/mfa.schemas.js';
import { IssuedSessionSchema } from '../sessions/sessions.schemas.js';
import { UserSchema } from '../users/users.schemas.js';

const Time = Type.String({ format: 'date-time' });
export const REDIRECT_URIS_MAX = 20;
export const SCOPES_MAX = 30;
export const URL_LENGTH_MAX = 2048;
/** Providers per project, built-in and generic together. */
export const PROVIDERS_PER_PROJECT_MAX = 50;

export const ProviderParams = StrictObject({
  provider: Type.String({ minLength: 1, maxLength: 64, description: '`google`, `github`, `apple`, or a generic provider key.' }),
});

export const ConfigureProviderBody = StrictObject({
  client_id: Type.String({ minLength: 1, maxLength: 512 }),
  client_secret: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'Required when the provider is first configured (except Apple); omitted later, the stored one is kept. Never returned.',
    }),
  ),
  issuer: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: URL_LENGTH_MAX,
      description: 'Generic OpenID Connect providers only: the issuer URL, discovered at `/.well-known/openid-configuration`.',
    }),
  ),
  scopes: Type.Optional(
    Type.Array(Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,128}$' }), {
      maxItems: SCOPES_MAX,
      uniqueItems: true,
      description: 'Default: `openid email profile` (Google, generic), `openid email name` (Apple), `read:user user:email` (GitHub).',
    }),
  ),
  redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: URL_LENGTH_MAX }), {
    minItems: 1,
    maxItems: REDIRECT_URIS_MAX,
    uniqueItems: true,
    description:
      'The only redirect URIs a sign-in may use, compared exactly. `https://`, or `http://` on a loopback host; no query or fragment.',
  }),
  apple: Type.Optional(
    StrictObject(
      {
        team_id: Type.String({ pattern: '^[A-Z0-9]{10}$' }),
        key_id: Type.String({ pattern: '^[A-Z0-9]{10}$' }),
        private_key: Type.Optional(
          Type.String({ minLength: 1, maxLength: 4096, description: 'PEM of the `.p8` key; required the first time; never returned.' }),
        ),
      },
      { description: 'Apple only: the client secret is an ES256 JWT made from these for each exchange.' },
    ),
  ),
});
export type ConfigureProviderBody = Static<typeof ConfigureProviderBody>;

export const ProviderSchema = Type.Object(
  {
    object: Type.Literal('oauth_provider'),
    provider: Type.String(),
    kind: Type.Union([Type.Literal('google'), Type.Literal('apple'), Type.Literal('github'), Type.Literal('oidc')]),
    client_id: Type.String(),
    issuer: Type.Union([Type.String(), Type.Null()], { description: 'Generic OpenID Connect providers; null for the built-in ones.' }),
    scopes: Type.Array(Type.String()),
    redirect_uris: Type.Array(Type.String()),
    apple: Type.Union([Type.Object({ team_id: Type.String(), key_id: Type.String() }), Type.Null()]),
    created_at: Time,
    updated_at: Time,
  },
  { $id: 'OAuthProvider', description: 'A configured provider. Its client secret (or Apple private key) is never returned.' },
);
export type Provider = Static<typeof ProviderSchema>;

export const ProviderListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(ProviderSchema), has_more: Type.Boolean() },
  { $id: 'OAuthProviderList' },
);

export const DeletedProviderSchema = Type.Object(
  { object: Type.Literal('oauth_provider'), provider: Type.String(), deleted: Type.Literal(true) },
  { $id: 'DeletedOAuthProvider' },
);

export const StartBody = StrictObject({
  redirect_uri: Type.String({ minLength: 1, maxLength: URL_LENGTH_MAX }),
  state: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9._~-]{16,512}$',
      description: 'Your own state value (16 to 512 URL-safe characters), used once; a random one is made when omitted.',
    }),
  ),
});
export type StartBody = Static<typeof StartBody>;

export const StartResponse = Type.Object(
  {
    url: Type.String({ description: "The provider's authorization URL: send the browser there." }),
    state: Type.String({ description: 'Comes back on the redirect URI with the code; valid once, for 10 minutes.' }),
  },
  { $id: 'OAuthStart' },
);

export const CallbackBody = StrictObject({
  code: Type.String({ minLength: 1, maxLength: 4096 }),
  state: Type.String({ minLength: 1, maxLength: 512 }),
  iss: Type.Optional(Type.String({ minLength: 1, maxLength: URL_LENGTH_MAX, description: 'When the redirect carried it (RFC 9207).' })),
});
export type CallbackBody = Static<typeof CallbackBody>;

export const CallbackResponse = Type.Object(
  {
    user: UserSchema,
    session: IssuedSessionSchema,
    created: Type.Boolean({ description: 'True when this sign-in created the user.' }),
  },
  { $id: 'OAuthSignIn' },
);

export const CallbackMfaResponse = Type.Object(
  {
    ...MfaChallengeSchema.properties,
    created: Type.Boolean({ description: 'True when this sign-in created the user.' }),
  },
  { $id: 'OAuthMfaChallenge', description: 'The user has a second factor: finish with `POST /v1/auth/mfa/verify`.' },
);
