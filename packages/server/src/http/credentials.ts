import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimitConfig } from '../config.js';
import type { ProjectsService } from '../modules/projects/projects.service.js';
import { limitAddress } from '../lib/client-address.js';
import { readCookie } from '../lib/cookies.js';
import { ApiError } from '../lib/errors.js';
import { endUserClient } from './end-user.js';
import type { DashboardAuthenticator, DashboardCredential, Principal, RouteCredential, SessionAuthenticator } from '../lib/principal.js';
import { type RateLimitDecision, type RateLimiter, type RateLimitRule, rateLimitRefusal } from '../lib/rate-limit.js';

const SESSION_TOKEN_PREFIX = 'svc_ses_';
const SECRET_KEY_PREFIX = 'svc_sk_';

export interface CredentialGuardOptions {
  readonly projects: ProjectsService;
  readonly sessions: SessionAuthenticator;
  readonly rateLimiter: RateLimiter;
  readonly rateLimit: RateLimitConfig;
  /** The dashboard's cookie sessions; without it, a cookie is no credential. */
  readonly dashboard?: DashboardAuthenticator;
}

/**
 * The onRequest hook that implements docs/api.md section 3 and the rate limits of section 1.
 *
 * Order matters: routes without a secret key are limited per client IP before any credential work;
 * a failed secret-key check also costs the client IP a token, so guessing keys is throttled; a valid
 * secret key is then limited per key. It runs before the body is read, so an unauthenticated
 * request never costs a parse.
 */
export function credentialGuard(options: CredentialGuardOptions) {
  const keyRule: RateLimitRule = { perSecond: options.rateLimit.keyPerSecond, burst: options.rateLimit.keyBurst };
  const ipRule: RateLimitRule = { perSecond: options.rateLimit.ipPerSecond, burst: options.rateLimit.ipBurst };

  async function limit(reply: FastifyReply, bucket: string, rule: RateLimitRule): Promise<void> {
    if (rule.perSecond === 0) return;
    const decision = await options.rateLimiter.consume(bucket, rule);
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) throw rateLimitRefusal(decision);
  }

  return async function guard(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const config = request.routeOptions.config;
    const credential: RouteCredential = config.credential ?? 'public';
    const limited = config.rateLimited !== false;
    if (limited && credential !== 'secret') await limit(reply, `ip:${limitAddress(request.ip)}`, ipRule);
    if (credential === 'public') return;

    let principal: Principal;
    try {
      principal = await authenticate(request, credential, options);
    } catch (error) {
      if (limited && credential === 'secret') await limit(reply, `ip:${limitAddress(request.ip)}`, ipRule);
      throw error;
    }
    request.principal = principal;
    if (limited && principal.kind === 'secret_key') await limit(reply, `key:${principal.keyId}`, keyRule);
    // Read only once the credential is known to be a secret key's: docs/architecture.md, "End-user context".
    request.endUser = endUserClient(request, principal);
  };
}

async function authenticate(
  request: FastifyRequest,
  credential: Exclude<RouteCredential, 'public'>,
  options: CredentialGuardOptions,
): Promise<Principal> {
  if (credential !== 'session' && options.dashboard !== undefined && !hasCredentialHeader(request)) {
    const cookie = readCookie(request.headers.cookie, options.dashboard.cookieName);
    if (cookie !== undefined) return options.dashboard.authenticate(dashboardCredential(request, cookie));
  }
  const token = readCredential(request, credential);
  if (token.startsWith(SESSION_TOKEN_PREFIX)) {
    if (credential === 'secret')
      throw new ApiError('secret_key_required', 'This route needs a secret key (svc_sk_…), not a session token.');
    return options.sessions.authenticate(token);
  }
  if (credential === 'session') {
    if (token.startsWith(SECRET_KEY_PREFIX))
      throw new ApiError('session_token_required', 'This route needs a session token (svc_ses_…), not a secret key.');
    throw new ApiError('session_invalid', 'The session token is not valid.');
  }
  const principal = await options.projects.authenticateSecretKey(token);
  if (principal === undefined)
    throw new ApiError('invalid_api_key', 'The secret key is not valid. Check that it is complete and has not been revoked.');
  return { kind: 'secret_key', projectId: principal.projectId, keyId: principal.keyId };
}

/**
 * The credential from `Authorization: Bearer …` or `X-API-Key`. Both headers are accepted for every
 * credential kind; an Authorization header of another scheme is refused rather than ignored, so a
 * misconfigured client learns why. Both headers with different values → 400 `credential_conflict`:
 * which one wins would otherwise depend on this function's order, and a proxy adding its own key
 * could silently act for the client's project.
 */
function readCredential(request: FastifyRequest, credential: Exclude<RouteCredential, 'public'>): string {
  const authorization = headerText(request.headers.authorization);
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match?.[1] === undefined) {
      const message = 'The Authorization header must be "Bearer <secret key or session token>".';
      throw new ApiError(credential === 'session' ? 'session_invalid' : 'invalid_api_key', message);
    }
    const apiKeyAlso = headerText(request.headers['x-api-key']);
    if (apiKeyAlso !== undefined && apiKeyAlso !== match[1])
      throw new ApiError('credential_conflict', 'The Authorization and X-API-Key headers carry different credentials; send one.');
    return match[1];
  }
  const apiKey = headerText(request.headers['x-api-key']);
  if (apiKey !== undefined) return apiKey;
  throw new ApiError('credential_missing', 'This route needs a credential: send "Authorization: Bearer <key>" or "X-API-Key: <key>".');
}

/** A header's trimmed text (its first value), or undefined when absent or blank: blank is no credential. */
function headerText(header: string | string[] | undefined): string | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** One rule with `readCredential`: a blank header is no credential, so the dashboard cookie still counts. */
function hasCredentialHeader(request: FastifyRequest): boolean {
  return headerText(request.headers.authorization) !== undefined || headerText(request.headers['x-api-key']) !== undefined;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function dashboardCredential(request: FastifyRequest, token: string): DashboardCredential {
  const csrf = request.headers['x-csrf-token'];
  return {
    token,
    csrfToken: Array.isArray(csrf) ? csrf[0] : csrf,
    origin: request.headers.origin,
    host: request.host,
    changes: !SAFE_METHODS.has(request.method),
  };
}

function setRateLimitHeaders(reply: FastifyReply, decision: RateLimitDecision): void {
  void reply.header('RateLimit-Limit', String(decision.limit));
  void reply.header('RateLimit-Remaining', String(decision.remaining));
  void reply.header('RateLimit-Reset', String(decision.resetSeconds));
}
