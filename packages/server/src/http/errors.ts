import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorBody, isApiError, renderError } from '../lib/errors.js';

export { type ErrorBody, renderError };

interface AjvErrorLike {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/**
 * Turns whatever was thrown while handling a request into an ApiError. Client mistakes that
 * Fastify detects (bad JSON, wrong content type, oversize body, schema violations) get their
 * catalog codes; anything else is a bug and becomes `internal_error`, with no detail for the client.
 */
export function toApiError(thrown: unknown): ApiError {
  if (isApiError(thrown)) return thrown;
  const error = thrown as Partial<FastifyError> & { validation?: AjvErrorLike[]; validationContext?: string; body?: unknown };
  if (Array.isArray(error.validation) && error.validation.length > 0) {
    return validationError(error.validation[0] as AjvErrorLike, error.validationContext ?? 'body');
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new ApiError('unsupported_media_type', 'Send the body as JSON with `Content-Type: application/json`.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('body_too_large', 'The request body is larger than 1 MiB.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('body_invalid_json', 'The body is empty but Content-Type says JSON.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('body_invalid_json', 'The Content-Length header does not match the body.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('body_invalid_json', 'The request body is not valid JSON.');
    default:
      break;
  }
  // Fastify's JSON parser throws a SyntaxError (or a prototype-poisoning error) with status 400.
  if (error.statusCode === 400 && (thrown instanceof SyntaxError || /JSON|prototype/i.test(error.message ?? ''))) {
    return new ApiError('body_invalid_json', 'The request body is not valid JSON.');
  }
  return new ApiError('internal_error', 'Something went wrong on our side. It has been logged with this request id.', { cause: thrown });
}

function validationError(failure: AjvErrorLike, context: string): ApiError {
  const base = pathToParam(failure.instancePath);
  if (failure.keyword === 'additionalProperties') {
    const param = joinParam(base, String(failure.params['additionalProperty']));
    return new ApiError('parameter_unknown', `Unknown parameter: ${param}.`, { param });
  }
  if (failure.keyword === 'required') {
    const param = joinParam(base, String(failure.params['missingProperty']));
    return new ApiError('parameter_missing', `Missing required parameter: ${param}.`, { param });
  }
  if (base === '' && context === 'body' && failure.keyword === 'type') {
    return new ApiError('parameter_missing', 'This route needs a JSON object body.');
  }
  const param = base === '' ? undefined : base;
  const what = param === undefined ? `The ${context}` : param;
  return new ApiError('parameter_invalid', `Invalid ${context === 'body' ? 'parameter' : context} ${what}: ${describe(failure)}.`, {
    param,
  });
}

function describe(failure: AjvErrorLike): string {
  if (failure.keyword === 'minimum') return `must be at least ${String(failure.params['limit'])}`;
  if (failure.keyword === 'maximum') return `must be at most ${String(failure.params['limit'])}`;
  if (failure.keyword === 'pattern') return `must match ${String(failure.params['pattern'])}`;
  return failure.message ?? 'is invalid';
}

/** `/metadata/plan` → `metadata.plan`; `/events/0` → `events[0]`. */
function pathToParam(instancePath: string): string {
  return instancePath
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((param, segment) => (/^\d+$/.test(segment) ? `${param}[${segment}]` : joinParam(param, segment)), '');
}

function joinParam(base: string, name: string): string {
  return base === '' ? name : `${base}.${name}`;
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) void reply.header(name, value);
  return reply.code(error.status).type('application/json; charset=utf-8').send(renderError(error, request.id));
}
