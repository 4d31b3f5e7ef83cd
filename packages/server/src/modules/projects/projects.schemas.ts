import { type Static, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../lib/schemas.js';
import { ORIGIN_LENGTH_MAX, ORIGINS_MAX, RP_ID_LENGTH_MAX, RP_NAME_LENGTH_MAX } from './relying-party.js';

const RelyingPartyProperties = {
  rp_id: Type.String({
    minLength: 1,
    maxLength: RP_ID_LENGTH_MAX,
    description: 'The domain passkeys are bound to: a lower-case host name such as `example.com` (`localhost` in development).',
  }),
  rp_name: Type.String({ minLength: 1, maxLength: 400, description: `Shown by authenticators; 1 to ${RP_NAME_LENGTH_MAX} characters.` }),
  origins: Type.Array(Type.String({ minLength: 1, maxLength: ORIGIN_LENGTH_MAX }), {
    minItems: 1,
    maxItems: ORIGINS_MAX,
    description:
      'The exact web origins ceremonies run on: `https://` on `rp_id` or a subdomain of it, or `http://localhost[:port]`. No path or trailing slash.',
  }),
};

export const RelyingPartySchema = Type.Object(RelyingPartyProperties, {
  $id: 'WebAuthnRelyingParty',
  description: 'The project\'s passkey relying party (docs/api.md, "Passkeys").',
});

export const ProjectSchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `prj_`.' }),
    object: Type.Literal('project'),
    name: Type.String(),
    webauthn: Type.Union([RelyingPartySchema, Type.Null()], { description: 'Null until set; passkey routes need it.' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Project' },
);

export const UpdateProjectBody = StrictObject({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: '1 to 200 characters after trimming.' })),
  webauthn: Type.Optional(
    Type.Union([StrictObject(RelyingPartyProperties), Type.Null()], {
      description: "The relying party of the project's passkeys; `null` removes it (passkeys then cannot be used).",
    }),
  ),
});
export type UpdateProjectBody = Static<typeof UpdateProjectBody>;

const apiKeyProperties = {
  id: Type.String({ description: 'Begins with `key_`.' }),
  object: Type.Literal('api_key'),
  project_id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  prefix: Type.String({ description: 'The first characters of the key, e.g. `svc_sk_Ab3d`.' }),
  last4: Type.String({ description: 'The last four characters of the key.' }),
  created_at: Type.String({ format: 'date-time' }),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
};

export const ApiKeySchema = Type.Object(apiKeyProperties, { $id: 'ApiKey' });
export const ApiKeyWithSecretSchema = Type.Object(
  { ...apiKeyProperties, secret_key: Type.String({ description: '`svc_sk_…`: shown only here, at creation.' }) },
  { $id: 'ApiKeyWithSecret' },
);
export const ApiKeyListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(ApiKeySchema), has_more: Type.Boolean() },
  { $id: 'ApiKeyList' },
);

export const CreateApiKeyBody = StrictObject({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) });
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;
export const ListApiKeysQuery = StrictObject({ ...ListQuery });
export const ApiKeyParams = StrictObject({ id: Type.String({ minLength: 1, maxLength: 100 }) });
