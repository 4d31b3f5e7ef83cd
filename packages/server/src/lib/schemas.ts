import { type TObject, type TProperties, Type } from '@sinclair/typebox';

/** An object schema that refuses unknown properties (→ 400 `parameter_unknown`). */
export function StrictObject<T extends TProperties>(properties: T, options: { description?: string; $id?: string } = {}): TObject<T> {
  return Type.Object(properties, { ...options, additionalProperties: false });
}

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      type: Type.String(),
      code: Type.String(),
      message: Type.String(),
      param: Type.Optional(Type.String()),
      request_id: Type.String(),
    }),
  },
  { $id: 'ErrorResponse', description: 'Every refusal; see docs/errors.md for the codes.' },
);

/** `?limit=&starting_after=` of every list (docs/api.md section 1). */
export const ListQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  starting_after: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
};

export const AcceptedSchema = Type.Object(
  { accepted: Type.Literal(true) },
  { $id: 'Accepted', description: 'Queued; the email goes out shortly.' },
);
