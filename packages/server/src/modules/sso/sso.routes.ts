import { defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import { ApiError } from '../../lib/errors.js';
import { auditContext } from '../audit/audit.service.js';
import { SAML_RESPONSE_BYTES_MAX } from './sso.saml.js';
import {
  AcsBody,
  CallbackBody,
  CallbackMfaResponse,
  CallbackResponse,
  ConnectionListSchema,
  ConnectionParams,
  ConnectionSchema,
  CreateConnectionBody,
  DeletedConnectionSchema,
  OidcCallbackQuery,
  OrganizationParams,
  PublicConnectionParams,
  StartBody,
  StartResponse,
} from './sso.schemas.js';
import type { SsoConnections, SsoService } from './sso.service.js';

/** The identity provider's browser form post takes no Idempotency-Key (no API client sends it). */
const noIdempotencyKey = { mode: 'off' } as const;
/** The form an identity provider posts: a SAMLResponse (base64) and a RelayState, with room to spare. */
const ACS_BODY_BYTES_MAX = SAML_RESPONSE_BYTES_MAX + 8 * 1024;

/** The answer of both callbacks (OIDC and SAML) once the identity provider has vouched for the user. */
const SENT_ON_TO_CLIENT = {
  type: 'null',
  description: "The browser is sent on (`Location`) to the sign-in's `redirect_uri` with `code` and `state`.",
  headers: { Location: { type: 'string', description: 'Where the browser goes next.' } },
};

/** HTTP only: `/v1/organizations/{id}/sso-connections*` and `/v1/auth/sso*`. */
export function ssoRoutes(connections: SsoConnections, sso: SsoService): RouteModule {
  return routeModule('sso', [
    defineRoute({
      method: 'POST',
      url: '/v1/organizations/:id/sso-connections',
      credential: 'secret',
      operationId: 'createSsoConnection',
      summary: "Create the organization's SSO connection (OIDC or SAML) with its email domains",
      description:
        "Creates the organization's enterprise SSO connection, over OpenID Connect (issuer, client id and secret) or SAML 2.0 (the identity provider's entity id, URL and certificate), for its verified email domains (422 `domain_unverified` otherwise).",
      errors: ['sso_connection_exists', 'sso_domain_taken', 'domain_unverified'],
      params: OrganizationParams,
      body: CreateConnectionBody,
      response: { 201: ConnectionSchema },
      handler: async (request, reply) => {
        const connection = await connections.create(
          requireSecretKey(request).projectId,
          request.params.id,
          request.body,
          auditContext(request),
        );
        return reply.code(201).send(connection);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/organizations/:id/sso-connections',
      credential: 'secret',
      operationId: 'listSsoConnections',
      summary: "The organization's SSO connections",
      description: "The organization's SSO connections; never the OIDC client secret.",
      params: OrganizationParams,
      response: { 200: ConnectionListSchema },
      handler: (request) => connections.list(requireSecretKey(request).projectId, request.params.id),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/organizations/:id/sso-connections/:connection_id',
      credential: 'secret',
      operationId: 'deleteSsoConnection',
      summary: 'Delete an SSO connection',
      description: 'Deletes an SSO connection: sign-ins through it are refused from now on.',
      params: ConnectionParams,
      response: { 200: DeletedConnectionSchema },
      handler: (request) =>
        connections.remove(requireSecretKey(request).projectId, request.params.id, request.params.connection_id, auditContext(request)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/sso',
      credential: 'secret',
      operationId: 'startSso',
      summary: "Start an SSO sign-in by email domain or organization: the identity provider's URL",
      description:
        "Starts an enterprise SSO sign-in for an email address (by its domain) or an organization: the identity provider's URL to send the browser to. The browser comes back to `redirect_uri` with a one-time `code` to exchange at `POST /v1/auth/sso/callback`.",
      errors: ['sso_connection_not_found', 'redirect_uri_not_allowed'],
      body: StartBody,
      response: { 200: StartResponse },
      handler: (request) => sso.start(requireSecretKey(request).projectId, request.body),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/sso/callback',
      credential: 'secret',
      operationId: 'completeSso',
      summary: 'Exchange the one-time code from the redirect for the user, a session and the organization',
      description: 'A user with an active second factor gets `{mfa_required: true, mfa_token, methods, organization_id}` and no session.',
      errors: ['sso_code_invalid', 'sso_domain_mismatch', 'user_banned', 'email_taken'],
      body: CallbackBody,
      response: { 200: { anyOf: [CallbackResponse, CallbackMfaResponse] } },
      handler: (request) => sso.callback(requireSecretKey(request).projectId, request.body.code, request.client, auditContext(request)),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/auth/sso/oidc/callback',
      credential: 'public',
      operationId: 'receiveSsoOidcCallback',
      summary: 'Where OpenID Connect identity providers send the browser back (public)',
      description:
        "Where an OpenID Connect identity provider sends the browser back: the service checks the answer and redirects (303) to the sign-in's `redirect_uri` with a one-time code of its own and the `state`. Needs no credential.",
      errors: ['sso_request_invalid', 'oauth_exchange_failed', 'sso_domain_mismatch', 'user_banned'],
      querystring: OidcCallbackQuery,
      response: { 303: SENT_ON_TO_CLIENT },
      handler: async (request, reply) => {
        const location = await sso.oidcCallback(request.query, auditContext(request));
        return reply.code(303).header('location', location).send();
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/auth/sso/saml/:connection_id/metadata',
      credential: 'public',
      operationId: 'getSamlMetadata',
      summary: "A SAML connection's service provider metadata (public, stable URL)",
      description:
        'The service provider metadata (XML) of a SAML connection, to give the identity provider: its entity id and AssertionConsumerService URL. A stable URL that needs no credential.',
      params: PublicConnectionParams,
      response: {
        200: {
          description: "The service provider's SAML 2.0 metadata (XML) for this connection.",
          content: { 'application/samlmetadata+xml': { schema: { type: 'string' } } },
        },
      },
      handler: async (request, reply) =>
        reply.type('application/samlmetadata+xml').send(await connections.metadata(request.params.connection_id)),
    }),
    // The identity provider's HTTP-POST binding is an HTML form: this route alone reads form bodies.
    defineRoute({
      method: 'POST',
      url: '/v1/auth/sso/saml/:connection_id/acs',
      credential: 'public',
      idempotency: noIdempotencyKey,
      bodyParser: { contentType: 'application/x-www-form-urlencoded', bodyLimit: ACS_BODY_BYTES_MAX, parse: acsForm },
      operationId: 'receiveSamlAssertion',
      summary: "A SAML connection's AssertionConsumerService (HTTP-POST binding, public)",
      description:
        "A SAML connection's AssertionConsumerService: the identity provider's form post (HTTP-POST binding) with the signed SAMLResponse. The service checks the signature, audience, destination, time and replay, then redirects (303) to the sign-in's `redirect_uri` with a one-time code. Needs no credential.",
      errors: [
        'sso_request_invalid',
        'sso_idp_initiated_not_allowed',
        'sso_signature_invalid',
        'sso_assertion_expired',
        'sso_assertion_replayed',
        'sso_audience_mismatch',
        'sso_destination_mismatch',
        'sso_response_invalid',
        'sso_domain_mismatch',
        'user_banned',
      ],
      params: PublicConnectionParams,
      body: AcsBody,
      consumes: ['application/x-www-form-urlencoded'],
      response: { 303: SENT_ON_TO_CLIENT },
      handler: async (request, reply) => {
        const body = request.body as AcsBody | undefined;
        if (body?.SAMLResponse === undefined)
          throw new ApiError('parameter_missing', 'The form carries no SAMLResponse.', { param: 'SAMLResponse' });
        const location = await sso.samlAcs(request.params.connection_id, body, auditContext(request));
        return reply.code(303).header('location', location).send();
      },
    }),
  ]);
}

/** The identity provider's form: its SAMLResponse and RelayState, nothing else. */
function acsForm(text: string): Record<string, string> {
  const form = new URLSearchParams(text);
  const body: Record<string, string> = {};
  for (const name of ['SAMLResponse', 'RelayState']) {
    const value = form.get(name);
    if (value !== null) body[name] = value;
  }
  return body;
}
