import { type Static, Type } from '@sinclair/typebox';
import { ListQuery, StrictObject } from '../../shared/schemas.js';

export const ProjectSchema = Type.Object(
  {
    id: Type.String({ description: 'Begins with `prj_`.' }),
    object: Type.Literal('project'),
    name: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Project' },
);

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
