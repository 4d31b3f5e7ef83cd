import Ajv, { type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Two validators: bodies are checked exactly as sent (a string "100" is not an amount, an unknown
 * field is an error, never silently dropped), while query strings and path parameters, which only
 * exist as text, are coerced to the types their schemas name.
 */
const shared: Options = { allErrors: false, removeAdditional: false, useDefaults: true, strict: false };
const bodyAjv = addFormats.default(new Ajv.default({ ...shared, coerceTypes: false }));
const textAjv = addFormats.default(new Ajv.default({ ...shared, coerceTypes: 'array' }));

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);
