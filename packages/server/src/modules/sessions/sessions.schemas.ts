import { type Static, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';
import { UserSchema } from '../users/users.schemas.js';

const Time = Type.String({ format: 'date-time' });
/** Long enough for any token or name of this service; anything longer cannot be one. */
const SESSION_ID_LENGTH_MAX = 200;

/** The session as log in, sign up and refresh return it: its `id` is the session token itself. */
export const IssuedSessionSchema = Type.Object(
  {
    id: Type.String({ description: 'The session token, `svc_ses_<ref>.<secret>`: send it as `Authorization: Bearer`.' }),
    expires_at: Time,
    refresh_token: Type.String({ description: '`svc_rt_…`; single use: `POST /v1/sessions/refresh` returns a new one.' }),
    refresh_expires_at: Time,
    jwt: Type.String({
      description:
        'A short-lived JWT of this session (`SESSION_JWT_TTL_SECONDS`), to verify offline against `GET /v1/projects/{project_id}/jwks.json`.',
    }),
  },
  { $id: 'IssuedSession' },
);
export type IssuedSession = Static<typeof IssuedSessionSchema>;

/** `{user, session}`: sign up, log in (shape A) and refresh. */
export const UserAndSessionSchema = Type.Object({ user: UserSchema, session: IssuedSessionSchema }, { $id: 'UserAndSession' });

/** A session as it is named, never presented: `id` is `svc_ses_<ref>`, with no secret. */
export const SessionInfoSchema = Type.Object(
  {
    id: Type.String({ description: '`svc_ses_<ref>`, the session token up to the dot.' }),
    object: Type.Literal('session'),
    user_id: Type.String(),
    ip: Type.Union([Type.String(), Type.Null()]),
    user_agent: Type.Union([Type.String(), Type.Null()]),
    created_at: Time,
    last_used_at: Time,
    expires_at: Time,
    refresh_expires_at: Time,
    revoked_at: Type.Union([Time, Type.Null()]),
    revoked_reason: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'Session' },
);
export type SessionInfo = Static<typeof SessionInfoSchema>;

export const SessionListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(SessionInfoSchema), has_more: Type.Boolean() },
  { $id: 'SessionList' },
);

export const ValidateSessionBody = StrictObject({
  session_id: Type.String({ maxLength: SESSION_ID_LENGTH_MAX, description: 'The whole session token.' }),
});

/** The two answers of `POST /sessions/validate`; each is also serialized on its own (sessions.routes.ts). */
export const ValidSessionResponse = Type.Object({
  valid: Type.Literal(true),
  user: UserSchema,
  session: SessionInfoSchema,
  jwt: Type.String({ description: 'A fresh JWT of the session, as `POST /v1/sessions/jwt` answers it.' }),
});
export const InvalidSessionResponse = Type.Object({
  valid: Type.Literal(false),
  reason: Type.Union([Type.Literal('expired'), Type.Literal('revoked'), Type.Literal('not_found')]),
});

export const ValidateSessionResponse = Type.Union([ValidSessionResponse, InvalidSessionResponse], { $id: 'SessionValidation' });

export const RefreshSessionBody = StrictObject({ refresh_token: Type.String({ maxLength: SESSION_ID_LENGTH_MAX }) });

export const SessionParams = StrictObject({
  id: Type.String({ minLength: 1, maxLength: SESSION_ID_LENGTH_MAX, description: '`svc_ses_<ref>`, or the whole token.' }),
});

export const LogoutBody = StrictObject({
  session_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: SESSION_ID_LENGTH_MAX,
      description: 'With a secret key: the session to end, as its token or `svc_ses_<ref>`. Ignored with a session token.',
    }),
  ),
});

export const ListSessionsQuery = StrictObject({ ...ListQuery });
export type ListSessionsQuery = Static<typeof ListSessionsQuery>;

export const RevokedSessionsSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(SessionInfoSchema, { description: 'The sessions this call revoked.' }),
    has_more: Type.Literal(false),
  },
  { $id: 'RevokedSessions' },
);

/** `POST /v1/sessions/jwt`: a fresh JWT of the presented session. */
export const SessionJwtSchema = Type.Object(
  {
    object: Type.Literal('session_jwt'),
    jwt: Type.String({
      description: "Signed with the project's signing key; verify it against `GET /v1/projects/{project_id}/jwks.json`.",
    }),
    expires_at: Type.String({ format: 'date-time', description: "Its `exp`: never past the session's own expiry." }),
  },
  { $id: 'SessionJwt' },
);
export type SessionJwt = Static<typeof SessionJwtSchema>;

/** A project's session JWT signing key, as rotation and the list answer it (never its private half). */
export const SigningKeyInfoSchema = Type.Object(
  {
    object: Type.Literal('signing_key'),
    kid: Type.String({ description: 'The `kid` of the JWTs it signs and of its entry in the JWKS.' }),
    alg: Type.Union([Type.Literal('ES256'), Type.Literal('RS256'), Type.Literal('EdDSA')]),
    status: Type.Union([Type.Literal('signing'), Type.Literal('next'), Type.Literal('retiring')], {
      description:
        '`signing` signs new JWTs; `next` is published and signs after the next rotation; `retiring` signs no more and stays published until every JWT it signed has expired.',
    }),
    created_at: Time,
    activated_at: Type.Union([Time, Type.Null()], { description: 'When it started signing; null for the next key.' }),
    retired_at: Type.Union([Time, Type.Null()], { description: 'When a rotation stopped it signing.' }),
  },
  { $id: 'SigningKey' },
);
export type SigningKeyInfo = Static<typeof SigningKeyInfoSchema>;

/** `GET /v1/project/signing-keys`: the keys the JWKS publishes, newest first; every one fits one page. */
export const SigningKeyListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(SigningKeyInfoSchema), has_more: Type.Boolean() },
  { $id: 'SigningKeyList' },
);
export type SigningKeyList = Static<typeof SigningKeyListSchema>;

/** `GET /v1/projects/{project_id}/jwks.json`: public keys only (RFC 7517). */
export const JwksSchema = Type.Object(
  {
    keys: Type.Array(
      Type.Object(
        { kid: Type.String(), kty: Type.String(), alg: Type.String(), use: Type.String() },
        { additionalProperties: true, description: 'A public JWK: `crv`, `x`, `y` (EC, OKP) or `n`, `e` (RSA); never `d`.' },
      ),
    ),
  },
  { $id: 'Jwks' },
);

export const ProjectJwksParams = StrictObject({
  project_id: Type.String({ minLength: 1, maxLength: 100, description: '`prj_…`.' }),
});
