import { type Static, Type } from '@sinclair/typebox';
import { StrictObject } from '../../lib/schemas.js';
import { MfaChallengeSchema } from '../mfa/mfa.schemas.js';
import { IssuedSessionSchema } from '../sessions/sessions.schemas.js';
import { UserSchema } from '../users/users.schemas.js';

const Time = Type.String({ format: 'date-time' });
export const URL_LENGTH_MAX = 2048;
export const DOMAINS_MAX = 20;
export const REDIRECT_URIS_MAX = 20;
const CERTIFICATE_LENGTH_MAX = 16 * 1024;
/** A DNS name of two or more labels, lower or upper case (stored lower case). */
const DOMAIN_PATTERN = '^(?=.{4,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$';

export const OrganizationParams = StrictObject({ id: Type.String({ minLength: 1, maxLength: 100 }) });
export const ConnectionParams = StrictObject({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  connection_id: Type.String({ minLength: 1, maxLength: 100 }),
});
export const PublicConnectionParams = StrictObject({ connection_id: Type.String({ minLength: 1, maxLength: 100 }) });

export const CreateConnectionBody = StrictObject({
  type: Type.Union([Type.Literal('oidc'), Type.Literal('saml')]),
  domains: Type.Array(Type.String({ pattern: DOMAIN_PATTERN }), {
    minItems: 1,
    maxItems: DOMAINS_MAX,
    uniqueItems: true,
    description: 'Email domains whose users sign in through this connection; a domain belongs to one connection of the project.',
  }),
  redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: URL_LENGTH_MAX }), {
    minItems: 1,
    maxItems: REDIRECT_URIS_MAX,
    uniqueItems: true,
    description:
      'Where a sign-in may send the browser back with its code, compared exactly: `https://`, or `http://` on a loopback host; no query or fragment. The first is where IdP-initiated sign-ins go unless their RelayState names another one of the list.',
  }),
  oidc: Type.Optional(
    StrictObject({
      issuer: Type.String({ minLength: 1, maxLength: URL_LENGTH_MAX, description: 'Discovered at `/.well-known/openid-configuration`.' }),
      client_id: Type.String({ minLength: 1, maxLength: 512 }),
      client_secret: Type.String({ minLength: 1, maxLength: 4096, description: 'Sealed at rest; never returned.' }),
    }),
  ),
  saml: Type.Optional(
    StrictObject({
      idp_entity_id: Type.String({ minLength: 1, maxLength: URL_LENGTH_MAX }),
      idp_sso_url: Type.String({ minLength: 1, maxLength: URL_LENGTH_MAX, description: 'The HTTP-Redirect SingleSignOnService URL.' }),
      idp_certificate: Type.String({
        minLength: 1,
        maxLength: CERTIFICATE_LENGTH_MAX,
        description: 'The X.509 signing certificate (PEM or base64): the only key whose signatures are accepted.',
      }),
    }),
  ),
  default_role: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'The role of members created at their first sign-in; default `member`.' }),
  ),
  allow_idp_initiated: Type.Optional(
    Type.Boolean({ description: 'SAML only: accept sign-ins the identity provider starts (no AuthnRequest). Default false.' }),
  ),
});
export type CreateConnectionBody = Static<typeof CreateConnectionBody>;

export const ConnectionSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('sso_connection'),
    organization_id: Type.String(),
    type: Type.Union([Type.Literal('oidc'), Type.Literal('saml')]),
    domains: Type.Array(Type.String()),
    redirect_uris: Type.Array(Type.String()),
    default_role: Type.String(),
    allow_idp_initiated: Type.Boolean(),
    oidc: Type.Union([
      Type.Object({
        issuer: Type.String(),
        client_id: Type.String(),
        redirect_uri: Type.String({ description: "The service's callback to register at the identity provider." }),
      }),
      Type.Null(),
    ]),
    saml: Type.Union([
      Type.Object({
        idp_entity_id: Type.String(),
        idp_sso_url: Type.String(),
        idp_certificate: Type.String(),
        sp_entity_id: Type.String({ description: "This service's entity id for the connection (also its metadata URL)." }),
        acs_url: Type.String({ description: 'The AssertionConsumerService URL (HTTP-POST binding).' }),
        metadata_url: Type.String(),
      }),
      Type.Null(),
    ]),
    created_at: Time,
  },
  { $id: 'SsoConnection', description: "An organization's SSO connection. The OIDC client secret is never returned." },
);
export type Connection = Static<typeof ConnectionSchema>;

export const ConnectionListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(ConnectionSchema), has_more: Type.Boolean() },
  { $id: 'SsoConnectionList' },
);

export const DeletedConnectionSchema = Type.Object(
  { id: Type.String(), object: Type.Literal('sso_connection'), deleted: Type.Literal(true) },
  { $id: 'DeletedSsoConnection' },
);

export const StartBody = StrictObject({
  email: Type.Optional(Type.String({ minLength: 3, maxLength: 254, description: "Routes by the address's domain." })),
  organization_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  redirect_uri: Type.String({ minLength: 1, maxLength: URL_LENGTH_MAX }),
  state: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9._~-]{1,512}$',
      description: 'Handed back unchanged on the redirect with the code.',
    }),
  ),
});
export type StartBody = Static<typeof StartBody>;

export const StartResponse = Type.Object(
  { url: Type.String({ description: "The identity provider's URL: send the browser there." }) },
  { $id: 'SsoStart' },
);

export const OidcCallbackQuery = Type.Object({
  state: Type.Optional(Type.String({ maxLength: 512 })),
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  iss: Type.Optional(Type.String({ maxLength: URL_LENGTH_MAX })),
  error: Type.Optional(Type.String({ maxLength: 256 })),
  error_description: Type.Optional(Type.String({ maxLength: 4096 })),
  session_state: Type.Optional(Type.String({ maxLength: 512 })),
});
export type OidcCallbackQuery = Static<typeof OidcCallbackQuery>;

export const AcsBody = Type.Object({
  SAMLResponse: Type.String({ minLength: 1 }),
  RelayState: Type.Optional(Type.String({ maxLength: URL_LENGTH_MAX })),
});
export type AcsBody = Static<typeof AcsBody>;

export const CallbackBody = StrictObject({ code: Type.String({ minLength: 1, maxLength: 256 }) });
export type CallbackBody = Static<typeof CallbackBody>;

export const CallbackResponse = Type.Object(
  { user: UserSchema, session: IssuedSessionSchema, organization_id: Type.String() },
  { $id: 'SsoSignIn' },
);

export const CallbackMfaResponse = Type.Object(
  { ...MfaChallengeSchema.properties, organization_id: Type.String() },
  { $id: 'SsoMfaChallenge', description: 'The user has a second factor: finish with `POST /v1/auth/mfa/verify`.' },
);
export type SsoSignIn = Static<typeof CallbackResponse> | Static<typeof CallbackMfaResponse>;
