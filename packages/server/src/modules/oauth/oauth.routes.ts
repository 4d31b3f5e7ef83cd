import { auditContext } from '../audit/audit.service.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteModule } from '../../lib/routes.js';
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

const tags = ['oauth'];
const security = [{ secretKey: [] }, { secretKeyHeader: [] }];

type WithProvider = FastifyRequest<{ Params: { provider: string } }>;

/** HTTP only: `/v1/auth/providers*` and `/v1/auth/oauth/*`. */
export function oauthRoutes(providers: OAuthProviders, oauth: OAuthService): RouteModule {
  return (app: FastifyInstance) => {
    app.put(
      '/v1/auth/providers/:provider',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'configureOAuthProvider',
          description:
            'Configures a sign-in provider: `google`, `github`, `apple`, or a generic OpenID Connect provider under a key of your choosing, with its client id and secret and the `redirect_uris` sign-ins may return to. The secret is sealed at rest and never returned.',
          errors: ['oauth_provider_unknown'],
          tags,
          security,
          summary: 'Configure a sign-in provider: google, github, apple, or a generic OpenID Connect provider by key',
          params: ProviderParams,
          body: ConfigureProviderBody,
          response: { 200: ProviderSchema },
        },
      },
      (request: WithProvider) =>
        providers.configure(
          requireSecretKey(request).projectId,
          request.params.provider,
          request.body as ConfigureProviderBody,
          auditContext(request),
        ),
    );

    app.get(
      '/v1/auth/providers',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'listOAuthProviders',
          description: "The project's configured sign-in providers with their client ids and redirect URIs; never their secrets.",
          tags,
          security,
          summary: "The project's configured providers (never their secrets)",
          response: { 200: ProviderListSchema },
        },
      },
      (request) => providers.list(requireSecretKey(request).projectId),
    );

    app.delete(
      '/v1/auth/providers/:provider',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'deleteOAuthProvider',
          description:
            "Removes a provider's configuration: sign-ins through it are refused from now on. Identities already linked to users stay.",
          tags,
          security,
          summary: "Remove a provider's configuration; linked identities stay",
          params: ProviderParams,
          response: { 200: DeletedProviderSchema },
        },
      },
      (request: WithProvider) => providers.remove(requireSecretKey(request).projectId, request.params.provider, auditContext(request)),
    );

    app.post(
      '/v1/auth/oauth/:provider',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'startOAuth',
          description:
            "Starts a sign-in with a provider: the provider's authorization URL to send the browser to, with PKCE S256, a single-use `state` and, for OpenID Connect, a nonce. `redirect_uri` must be on the provider's allow list.",
          errors: ['oauth_provider_unknown', 'oauth_provider_not_configured', 'redirect_uri_not_allowed'],
          tags,
          security,
          summary: "Start a sign-in: the provider's URL (PKCE S256, single-use state, nonce for OpenID Connect)",
          params: ProviderParams,
          body: StartBody,
          response: { 200: StartResponse },
        },
      },
      (request: WithProvider) => oauth.start(requireSecretKey(request).projectId, request.params.provider, request.body as StartBody),
    );

    app.post(
      '/v1/auth/oauth/:provider/callback',
      {
        config: { credential: 'secret' },
        schema: {
          operationId: 'completeOAuth',
          errors: [
            'oauth_provider_unknown',
            'oauth_provider_not_configured',
            'oauth_state_invalid',
            'oauth_exchange_failed',
            'identity_already_linked',
            'email_taken',
            'user_banned',
          ],
          tags,
          security,
          summary: 'Finish a sign-in with the code and state from the redirect: the user and a new session',
          description: 'A user with an active second factor gets `{mfa_required: true, mfa_token, methods, created}` and no session.',
          params: ProviderParams,
          body: CallbackBody,
          response: { 200: { anyOf: [CallbackResponse, CallbackMfaResponse] } },
        },
      },
      (request: WithProvider) =>
        oauth.callback(
          requireSecretKey(request).projectId,
          request.params.provider,
          request.body as CallbackBody,
          request.client,
          auditContext(request),
        ),
    );
  };
}
