/**
 * Renders the service's OpenAPI 3.1 document as TypeScript: one interface per component schema,
 * one `Operations` map keyed by `"METHOD /path"` with each operation's path parameters, query,
 * body and success response, and the `operations` table keyed by `operationId` from which the
 * clients build one method per operation (`client.operations.listOrganizations()`). The SDK calls
 * the API only through keys of that map, so a path or field the server does not have is a type
 * error, and a route the server adds is a method as soon as this file is generated again.
 *
 * Only the JSON Schema the server's TypeBox schemas produce is understood: objects, arrays,
 * strings, numbers, booleans, null, `enum`, `const`, `anyOf`/`oneOf`/`allOf` and `$ref` to a
 * component. Anything else fails loudly instead of turning into a silent `unknown`.
 */

export interface JsonSchema {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly allOf?: readonly JsonSchema[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly items?: JsonSchema;
  readonly description?: string;
}

interface Parameter {
  readonly in: 'path' | 'query' | 'header' | 'cookie';
  readonly name: string;
  readonly required?: boolean;
  readonly description?: string;
  readonly schema: JsonSchema;
}

interface Operation {
  readonly operationId?: string;
  readonly summary?: string;
  readonly security?: ReadonlyArray<Readonly<Record<string, readonly string[]>>>;
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: { readonly required?: boolean; readonly content?: Readonly<Record<string, { readonly schema?: JsonSchema }>> };
  readonly responses?: Readonly<Record<string, { readonly content?: Readonly<Record<string, { readonly schema?: JsonSchema }>> }>>;
}

export interface OpenApiDocument {
  readonly paths: Readonly<Record<string, Readonly<Record<string, Operation>>>>;
  readonly components?: { readonly schemas?: Readonly<Record<string, JsonSchema>> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const HEADER = `/*
 * Generated from the service's OpenAPI document (GET /v1/openapi.json) by
 * packages/sdk/scripts/openapi-types.ts. Do not edit by hand: run \`npm run generate -w @svc/sdk\`.
 * packages/sdk/test/openapi-types.test.ts fails whenever this file and the server's routes differ.
 */
`;

/** Keys in a fixed order, so two schemas that differ only in key order compare equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function comment(text: string | undefined, indent: string): string {
  if (text === undefined || text.trim() === '') return '';
  const lines = text.replaceAll('*/', '*\\/').split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0] ?? ''} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} * ${line}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

function propertyName(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

function componentName(ref: string): string {
  const prefix = '#/components/schemas/';
  if (!ref.startsWith(prefix)) throw new Error(`unsupported $ref ${ref}`);
  return ref.slice(prefix.length);
}

class Renderer {
  /** Inline schemas equal to a component are written as that component's name. */
  readonly #components = new Map<string, string>();

  constructor(components: Readonly<Record<string, JsonSchema>>) {
    for (const [name, schema] of Object.entries(components)) this.#components.set(canonical(schema), name);
  }

  type(schema: JsonSchema, indent: string, self?: string): string {
    const named = this.#components.get(canonical(schema));
    if (named !== undefined && named !== self) return named;
    if (schema.$ref !== undefined) return componentName(schema.$ref);
    if (schema.const !== undefined) return JSON.stringify(schema.const);
    if (schema.enum !== undefined) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
    const union = schema.anyOf ?? schema.oneOf;
    if (union !== undefined) return this.#join(union, ' | ', indent);
    if (schema.allOf !== undefined) return this.#join(schema.allOf, ' & ', indent);
    if (Array.isArray(schema.type)) {
      return (schema.type as readonly string[]).map((type) => this.type({ ...schema, type }, indent)).join(' | ');
    }
    switch (schema.type) {
      case 'string':
        return 'string';
      case 'integer':
      case 'number':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array': {
        if (schema.items === undefined) return 'unknown[]';
        const item = this.type(schema.items, indent);
        return /^[A-Za-z0-9_]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
      }
      case 'object':
        return this.object(schema, indent);
      case undefined:
        if (Object.keys(schema).every((key) => key === 'description')) return 'unknown';
        break;
    }
    throw new Error(`unsupported schema ${JSON.stringify(schema)}`);
  }

  object(schema: JsonSchema, indent: string): string {
    const properties = Object.entries(schema.properties ?? {});
    const extra = schema.additionalProperties;
    if (properties.length === 0) {
      if (extra === false) return 'Record<string, never>';
      return `Record<string, ${extra === undefined || extra === true ? 'unknown' : this.type(extra, indent)}>`;
    }
    const inner = `${indent}  `;
    const required = new Set(schema.required ?? []);
    let body = '';
    for (const [name, property] of properties) {
      body += comment(property.description, inner);
      body += `${inner}${propertyName(name)}${required.has(name) ? '' : '?'}: ${this.type(property, inner)};\n`;
    }
    if (extra !== undefined && extra !== false) {
      body += `${inner}[key: string]: ${extra === true ? 'unknown' : this.type(extra, inner)};\n`;
    }
    return `{\n${body}${indent}}`;
  }

  #join(schemas: readonly JsonSchema[], separator: string, indent: string): string {
    const parts = schemas.map((part) => this.type(part, indent));
    const unique = [...new Set(parts)];
    return unique.length === 1 ? (unique[0] ?? 'never') : unique.map((part) => (part.includes('\n') ? `(${part})` : part)).join(separator);
  }

  parameters(parameters: readonly Parameter[], location: 'path' | 'query', indent: string): string {
    const selected = parameters.filter((parameter) => parameter.in === location);
    if (selected.length === 0) return 'Record<string, never>';
    return this.object(
      {
        type: 'object',
        required: selected.filter((parameter) => parameter.required === true).map((parameter) => parameter.name),
        properties: Object.fromEntries(
          selected.map((parameter) => [
            parameter.name,
            parameter.description === undefined ? parameter.schema : { ...parameter.schema, description: parameter.description },
          ]),
        ),
      },
      indent,
    );
  }
}

/** Who may call an operation, from its `security`: the client whose credential it takes gets its method. */
export type OperationCredential = 'secret' | 'session' | 'any' | 'public';

function credentialOf(operation: Operation, name: string): OperationCredential {
  const schemes = new Set((operation.security ?? []).flatMap((requirement) => Object.keys(requirement)));
  if (operation.security === undefined) throw new Error(`${name} has no security`);
  const secret = schemes.has('secretKey') || schemes.has('secretKeyHeader');
  const session = schemes.has('sessionToken');
  return secret && session ? 'any' : secret ? 'secret' : session ? 'session' : 'public';
}

/** A list in the API's shape (`{object: 'list', data, has_more}`) that pages with `starting_after`. */
function isList(operation: Operation, responseSchema: JsonSchema | undefined): boolean {
  const properties = responseSchema?.properties ?? {};
  const pages = (operation.parameters ?? []).some((parameter) => parameter.in === 'query' && parameter.name === 'starting_after');
  return pages && properties['data']?.type === 'array' && properties['has_more'] !== undefined;
}

/** The TypeScript source of `src/generated/openapi.ts` (before formatting). */
export function renderOpenApiTypes(document: OpenApiDocument): string {
  const components = document.components?.schemas ?? {};
  const renderer = new Renderer(components);
  let source = HEADER;
  for (const [name, schema] of Object.entries(components)) {
    source += `\n${comment(schema.description, '')}`;
    const type = renderer.type(schema, '', name);
    source += type.startsWith('{') ? `export interface ${name} ${type}\n` : `export type ${name} = ${type};\n`;
  }

  let table = '';
  const names = new Set<string>();
  source += '\n/** Every operation of the API, keyed by method and path template. */\nexport interface Operations {\n';
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation === undefined) continue;
      const key = `${method.toUpperCase()} ${path}`;
      const indent = '    ';
      const parameters = operation.parameters ?? [];
      const bodyContent = operation.requestBody?.content ?? {};
      const bodySchema = bodyContent['application/json']?.schema ?? bodyContent['application/x-www-form-urlencoded']?.schema;
      // A route's success is its first 2xx; the routes an identity provider sends the browser back
      // to only ever answer a redirect (303), which is their success.
      const [status, response] =
        Object.entries(operation.responses ?? {})
          .filter(([code]) => /^[23]\d\d$/.test(code))
          .sort(([a], [b]) => Number(a) - Number(b))[0] ?? [];
      if (status === undefined) throw new Error(`${key} has no success response`);
      const responseSchema = response?.content?.['application/json']?.schema;
      // A documented body in another media type (Prometheus text) is read as text.
      const responseType =
        status === '204' || status.startsWith('3')
          ? 'undefined'
          : responseSchema !== undefined
            ? renderer.type(responseSchema, indent)
            : Object.keys(response?.content ?? {}).length > 0
              ? 'string'
              : 'unknown';
      source += comment(operation.summary, '  ');
      source += `  ${JSON.stringify(key)}: {\n`;
      source += `${indent}path: ${renderer.parameters(parameters, 'path', indent)};\n`;
      source += `${indent}query: ${renderer.parameters(parameters, 'query', indent)};\n`;
      source += `${indent}body: ${bodySchema === undefined ? 'undefined' : renderer.type(bodySchema, indent)};\n`;
      source += `${indent}status: ${status};\n`;
      source += `${indent}response: ${responseType};\n`;
      source += '  };\n';

      const id = operation.operationId;
      if (id === undefined || !/^[a-z][A-Za-z0-9]*$/.test(id)) throw new Error(`${key} has no camelCase operationId`);
      if (names.has(id)) throw new Error(`operationId ${id} is used twice`);
      names.add(id);
      const body = bodyContent['application/x-www-form-urlencoded'] !== undefined ? 'form' : bodySchema === undefined ? 'none' : 'json';
      table += comment(operation.summary === undefined ? key : `\`${key}\`: ${operation.summary}`, '  ');
      table += `  ${id}: { method: '${method.toUpperCase()}', path: ${JSON.stringify(path)}, credential: '${credentialOf(operation, key)}', body: '${body}', list: ${isList(operation, responseSchema)} },\n`;
    }
  }
  source += '}\n';
  source +=
    '\n/**\n * Every operation by its `operationId`: method, path template, the credential it takes\n' +
    ' * (`secret`, `session`, `any` or `public`), how its body is sent, and whether it is a list that\n' +
    ' * pages with `starting_after`. The clients turn each entry into a method of `operations`.\n */\n';
  return `${source}export const operations = {\n${table}} as const;\n`;
}
