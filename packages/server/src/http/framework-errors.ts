import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { renderError, sendError, toApiError } from './errors.js';

/**
 * Refusals that happen before a route is found, in the one error shape with a request id
 * (docs/api.md section 2) instead of Fastify's or Node's own bodies. Regression: a path parameter
 * over the length limit answered Fastify's `{"error":"Bad Request","code":"FST_ERR_MAX_PARAM_LENGTH"}`
 * and a 20 KB header Node's bare 431.
 */

/** Fastify's `frameworkErrors`: errors of the router, with a request and a reply to answer on. */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // No onRequest hook ran for these, so the header every response carries is set here.
  void reply.header('Request-Id', request.id);
  void sendError(request, reply, frameworkError(error));
}

function frameworkError(error: FastifyError): ApiError {
  switch (error.code) {
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('url_too_long', 'A path parameter is longer than 100 characters; no id is that long.');
    case 'FST_ERR_BAD_URL':
      return new ApiError('url_invalid', 'The path is not valid percent-encoding.');
    default:
      return toApiError(error);
  }
}

/**
 * Node's `clientError`: the request could not even be parsed, so there is no request object and
 * the connection must close. Answers in the same shape, with a fresh request id, then ends the socket.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (!socket.writable || responseStarted(socket)) {
    socket.destroy(error);
    return;
  }
  const apiError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('headers_too_large', 'The request headers are larger than 16 KiB in all.')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('request_timeout', 'The request did not arrive whole in time.')
        : new ApiError('request_malformed', 'The request is not valid HTTP/1.1.');
  const requestId = newId('req');
  const body = JSON.stringify(renderError(apiError, requestId));
  socket.end(
    `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? 'Error'}\r\n` +
      `Connection: close\r\nContent-Type: application/json; charset=utf-8\r\nRequest-Id: ${requestId}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    // A late request's client has stopped sending and may never close its side: once the answer
    // is out the connection goes, and with it the request still waiting for its body.
    () => {
      if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') socket.destroy();
    },
  );
}

/**
 * Whether a response on this connection has begun (its status line is out), as Node's own
 * handler asks: another answer written now would land in the middle of it. `_httpMessage` is the
 * response Node is writing on the socket; it is not in Node's types.
 */
function responseStarted(socket: Socket): boolean {
  return (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage?.headersSent === true;
}
