// `@svc/sdk/session-jwt`: offline verification of session JWTs and middleware for servers. Node 20+
// only (node:crypto), so it is an entry of its own and the main entry stays browser-safe.
export { SessionJwtError, type SessionJwtErrorCode } from '../errors.js';
export type { SessionJwtAlgorithm } from './key-set.js';
export {
  type ExpressLikeMiddleware,
  type ExpressLikeRequest,
  type ExpressLikeResponse,
  type FastifyLikeReply,
  type FastifyLikeRequest,
  sessionJwtHook,
  sessionJwtMiddleware,
  type SessionMiddlewareOptions,
  tokenFrom,
  withSession,
} from './middleware.js';
export {
  createSessionJwtVerifier,
  JWKS_REFETCH_INTERVAL_MS,
  type SessionAuthenticationMethod,
  type SessionJwtClaims,
  type SessionJwtVerifier,
  type SessionJwtVerifierOptions,
  verifySessionJwt,
  type VerifySessionJwtOptions,
} from './verifier.js';
