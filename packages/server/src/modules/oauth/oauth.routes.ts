import { auditContext } from '../audit/audit.service.js';
import { defineRoute, type RouteModule, routeModule } from '../../lib/routes.js';
import { requireSecretKey } from '../../lib/principal.js';
import {
  CallbackBody,
  CallbackMfaResponse,
  CallbackResponse,
  ConfigureProviderBody,
  DeletedProviderSchema,
  ProviderListSchema,
  ProviderParams,
  ProviderSchema,
  StartBody,
  StartResponse,
} from './oauth.schemas.js';
import type { OAuthProviders, OAuthService } from './oauth.service.js';

/** HTTP only: `/v1/auth/providers*` and `/v1/auth/oauth/*`. */
export function oauthRoutes(providers: OAuthProviders, oauth: OAuthService): RouteModule {
  return routeModule('oauth', [
    defineRoute({
      method: 'PUT',
      url: '/v1/auth/providers/:provider',
      credential: 'secret',
      operationId: 'configureOAuthProvider',
      summary: 'Configure a sign-in provider: google, github, apple, or a generic OpenID Connect provider by key',
      description:
        'Configures a sign-in provider: `google`, `github`, `apple`, or a generic OpenID Connect provider under a key of your choosing, with its client id and secret and the `redirect_uris` sign-ins may return to. The secret is sealed at rest and never returned.',
      errors: ['oauth_provider_unknown'],
      params: ProviderParams,
      body: ConfigureProviderBody,
      response: { 200: ProviderSchema },
      handler: (request) =>
        providers.configure(requireSecretKey(request).projectId, request.params.provider, request.body, auditContext(request)),
    }),
    defineRoute({
      method: 'GET',
      url: '/v1/auth/providers',
      credential: 'secret',
      operationId: 'listOAuthProviders',
      summary: "The project's configured providers (never their secrets)",
      description: "The project's configured sign-in providers with their client ids and redirect URIs; never their secrets.",
      response: { 200: ProviderListSchema },
      handler: (request) => providers.list(requireSecretKey(request).projectId),
    }),
    defineRoute({
      method: 'DELETE',
      url: '/v1/auth/providers/:provider',
      credential: 'secret',
      operationId: 'deleteOAuthProvider',
      summary: "Remove a provider's configuration; linked identities stay",
      description:
        "Removes a provider's configuration: sign-ins through it are refused from now on. Identities already linked to users stay.",
      params: ProviderParams,
      response: { 200: DeletedProviderSchema },
      handler: (request) => providers.remove(requireSecretKey(request).projectId, request.params.provider, auditContext(request)),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/oauth/:provider',
      credential: 'secret',
      operationId: 'startOAuth',
      summary: "Start a sign-in: the provider's URL (PKCE S256, single-use state, nonce for OpenID Connect)",
      description:
        "Starts a sign-in with a provider: the provider's authorization URL to send the browser to, with PKCE S256, a single-use `state` and, for OpenID Connect, a nonce. `redirect_uri` must be on the provider's allow list.",
      errors: ['oauth_provider_unknown', 'oauth_provider_not_configured', 'redirect_uri_not_allowed'],
      params: ProviderParams,
      body: StartBody,
      response: { 200: StartResponse },
      handler: (request) => oauth.start(requireSecretKey(request).projectId, request.params.provider, request.body),
    }),
    defineRoute({
      method: 'POST',
      url: '/v1/auth/oauth/:provider/callback',
      credential: 'secret',
      operationId: 'completeOAuth',
      summary: 'Finish a sign-in with the code and state from the redirect: the user and a new session',
      description: 'A user with an active second factor gets `{mfa_required: true, mfa_token, methods, created}` and no session.',
      errors: [
        'oauth_provider_unknown',
        'oauth_provider_not_configured',
        'oauth_state_invalid',
        'oauth_exchange_failed',
        'identity_already_linked',
        'email_taken',
        'user_banned',
      ],
      params: ProviderParams,
      body: CallbackBody,
      response: { 200: { anyOf: [CallbackResponse, CallbackMfaResponse] } },
      handler: (request) =>
        oauth.callback(requireSecretKey(request).projectId, request.params.provider, request.body, request.client, auditContext(request)),
    }),
  ]);
}
