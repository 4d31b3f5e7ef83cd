import type { FastifyInstance } from 'fastify';
import type { RequestSpan, Tracer } from '../lib/tracing.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's span; set only while traces are on. */
    traceSpan: RequestSpan | undefined;
  }
}

/**
 * A span per request, with its route template, status and project, continuing the caller's
 * `traceparent`. Registered only when traces are on (lib/tracing.ts), and before every other
 * onRequest hook, so that the credential guard's reads are children of the span too.
 *
 * The hooks are callback style: the rest of the request runs inside `enter`. Reading the body
 * happens in the socket's own callbacks, outside that, so preValidation enters again.
 */
export function traceRequests(app: FastifyInstance, tracer: Tracer): void {
  app.decorateRequest('traceSpan', undefined);
  app.addHook('onRequest', (request, _reply, done) => {
    const span = tracer.startRequest({
      method: request.method,
      route: request.routeOptions.url,
      traceparent: single(request.headers.traceparent),
      tracestate: single(request.headers.tracestate),
    });
    request.traceSpan = span;
    span.enter(done);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.traceSpan === undefined) done();
    else request.traceSpan.enter(done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    request.traceSpan?.end({ status: reply.statusCode, projectId: request.principal?.projectId });
    done();
  });
  // A client that hangs up before the answer gets no onResponse; its span ends here, without a status.
  app.addHook('onRequestAbort', (request, done) => {
    request.traceSpan?.end({ status: 0, projectId: request.principal?.projectId });
    done();
  });
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
