/**
 * The descriptions of success responses that a route's schema leaves undescribed (@fastify/swagger
 * writes "Default Response" on them), derived from what the response schema says it is.
 */

/** What @fastify/swagger writes on a response whose schema has no `description`. */
const DEFAULT_RESPONSE_DESCRIPTION = 'Default Response';

export interface SuccessResponse {
  description?: string;
  content?: Record<string, { schema?: JsonSchema }>;
}
interface JsonSchema {
  readonly $ref?: string;
  readonly anyOf?: readonly JsonSchema[];
  readonly required?: readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema & { readonly enum?: readonly unknown[]; readonly items?: JsonSchema }>>;
}

/** The responses, each 2xx described. */
export function describedSuccesses(responses: Record<string, SuccessResponse>): Record<string, SuccessResponse> {
  const described: Record<string, SuccessResponse> = {};
  for (const [status, response] of Object.entries(responses)) {
    described[status] =
      status.startsWith('2') && (response.description === undefined || response.description === DEFAULT_RESPONSE_DESCRIPTION)
        ? { ...response, description: successDescription(status, response) }
        : response;
  }
  return described;
}

/**
 * A success response's description, from what its schema says it is: the `object` it names (every
 * resource of this API has one, docs/api.md section 2), a page of them, or one of several schemas.
 */
export function successDescription(status: string, response: SuccessResponse): string {
  const schema = Object.values(response.content ?? {})[0]?.schema;
  if (schema === undefined) return status === '204' ? 'Done; no body.' : 'Done.';
  const kind = objectKind(schema);
  if (kind === 'list') {
    const item = schema.properties?.['data']?.items;
    const itemKind = item === undefined ? undefined : (objectKind(item) ?? referenceName(item));
    return `A page of ${itemKind === undefined ? 'results' : `\`${itemKind}\` objects`} in \`data\`; \`has_more\` is true when another page follows.`;
  }
  if (kind !== undefined) {
    if (schema.properties?.['deleted'] !== undefined) return `The deleted \`${kind}\`: its identifier and \`deleted: true\`.`;
    return status === '201' ? `Created: the new \`${kind}\`.` : `The \`${kind}\`.`;
  }
  const reference = referenceName(schema);
  if (reference !== undefined) return status === '201' ? `Created: the new \`${reference}\`.` : `The \`${reference}\`.`;
  if (schema.anyOf !== undefined) {
    return `One of: ${schema.anyOf.map((option) => `\`${referenceName(option) ?? objectKind(option) ?? shape(option)}\``).join(', ')}.`;
  }
  return `${status === '201' ? 'Created' : 'The result'}: \`${shape(schema)}\`.`;
}

/** An object schema as the names of its required fields, the way docs/api.md writes one: `{user, session}`. */
function shape(schema: JsonSchema): string {
  return `{${(schema.required ?? []).join(', ')}}`;
}

function objectKind(schema: JsonSchema): string | undefined {
  const values = schema.properties?.['object']?.enum;
  return values?.length === 1 && typeof values[0] === 'string' ? values[0] : undefined;
}

function referenceName(schema: JsonSchema): string | undefined {
  return schema.$ref?.split('/').pop();
}
