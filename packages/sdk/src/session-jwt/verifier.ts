/// <reference types="node" />
import { verify as verifySignature } from 'node:crypto';
import { SessionJwtError } from '../errors.js';
import { KeySet, type SessionJwtAlgorithm, type VerificationKey } from './key-set.js';
import { VerifiedTokens } from './verified-tokens.js';

/**
 * Offline verification of the service's session JWTs (CONTRACT 9.3): signature against the
 * project's published keys, then `iss`, `aud`, `exp` and `nbf`. Signatures are checked with
 * node:crypto's synchronous `verify` on `KeyObject`s imported once per `kid`; there is no second,
 * slower path to keep in step with this one.
 */

/** How the session signed in (RFC 8176 names where there is one). */
export type SessionAuthenticationMethod = 'pwd' | 'otp' | 'mfa' | 'webauthn' | 'oauth' | 'sso' | 'email_code' | (string & {});

/** The claims of a verified session JWT. Frozen: a verifier hands the same object to every caller of the same token. */
export interface SessionJwtClaims {
  /** `<baseUrl>/v1/projects/<project id>`. */
  readonly iss: string;
  /** The project id. */
  readonly aud: string | readonly string[];
  /** The user id, `usr_…`. */
  readonly sub: string;
  /** The session's name, `svc_ses_<ref>`: what `POST /sessions/{id}/revoke` and events call it. */
  readonly sid: string;
  /** Issued at and expires at, in seconds since the epoch. */
  readonly iat: number;
  readonly exp: number;
  readonly nbf?: number;
  readonly email: string;
  readonly email_verified: boolean;
  readonly roles: readonly string[];
  readonly amr: readonly SessionAuthenticationMethod[];
}

export interface SessionJwtVerifierOptions {
  /** The service's public URL, as its `PUBLIC_URL`; `iss` must be `<baseUrl>/v1/projects/<projectId>`. */
  readonly baseUrl: string;
  readonly projectId: string;
  /** Clock difference allowed on `exp` and `nbf`; default 5 s, at most 300. */
  readonly clockToleranceSeconds?: number;
  /** Verified tokens kept (least recently used dropped first); default 1,000, 0 keeps none. */
  readonly verifiedTokenCacheSize?: number;
  /** Bound on one fetch of the key set; default 5,000 ms. */
  readonly jwksTimeoutMs?: number;
  /** For tests and unusual runtimes; default the global `fetch`. */
  readonly fetch?: typeof globalThis.fetch;
  /** The clock, in milliseconds since the epoch; default `Date.now`. */
  readonly nowMs?: () => number;
}

export interface SessionJwtVerifier {
  /** The claims of `jwt`, or a `SessionJwtError` saying why it is refused. */
  verify(jwt: string): Promise<SessionJwtClaims>;
}

/** At most one fetch of the key set per 30 s for unknown `kid`s (CONTRACT 9.3). */
export const JWKS_REFETCH_INTERVAL_MS = 30_000;
const CLOCK_TOLERANCE_SECONDS_DEFAULT = 5;
const CLOCK_TOLERANCE_SECONDS_MAX = 300;
const VERIFIED_TOKEN_CACHE_SIZE_DEFAULT = 1_000;
const VERIFIED_TOKEN_CACHE_SIZE_MAX = 1_000_000;
const JWKS_TIMEOUT_MS_DEFAULT = 5_000;
/** Ours are under 1 KiB; the bound keeps a hostile header from costing more than a parse of 16 KiB. */
const JWT_LENGTH_MAX = 16 * 1024;
const KID_LENGTH_MAX = 256;
const SEGMENT = /^[A-Za-z0-9_-]+$/;
const ALGORITHMS: ReadonlySet<string> = new Set<SessionJwtAlgorithm>(['ES256', 'RS256', 'EdDSA']);

export function createSessionJwtVerifier(options: SessionJwtVerifierOptions): SessionJwtVerifier {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const issuer = `${baseUrl}/v1/projects/${options.projectId}`;
  const audience = options.projectId;
  const toleranceSeconds = bounded(options.clockToleranceSeconds, CLOCK_TOLERANCE_SECONDS_DEFAULT, CLOCK_TOLERANCE_SECONDS_MAX);
  const nowMs = options.nowMs ?? Date.now;
  const keys = new KeySet({
    url: `${baseUrl}/v1/projects/${encodeURIComponent(options.projectId)}/jwks.json`,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    nowMs,
    refetchIntervalMs: JWKS_REFETCH_INTERVAL_MS,
    fetchTimeoutMs: options.jwksTimeoutMs ?? JWKS_TIMEOUT_MS_DEFAULT,
  });
  const verified = new VerifiedTokens<SessionJwtClaims>(
    bounded(options.verifiedTokenCacheSize, VERIFIED_TOKEN_CACHE_SIZE_DEFAULT, VERIFIED_TOKEN_CACHE_SIZE_MAX),
  );

  return {
    async verify(jwt) {
      if (typeof jwt !== 'string' || jwt.length > JWT_LENGTH_MAX) throw malformed('The session JWT is not a string of at most 16 KiB.');
      const hit = verified.get(jwt, nowMs() / 1000);
      if (hit !== undefined) return hit;
      const token = parseCompact(jwt);
      const key = keys.find(token.kid) ?? (await keys.resolve(token.kid));
      checkSignature(token, key);
      const claims = checkClaims(decodeJson(token.payload, 'payload'), { issuer, audience, toleranceSeconds, nowSeconds: nowMs() / 1000 });
      verified.set(jwt, claims);
      return claims;
    },
  };
}

interface CompactJwt {
  readonly algorithm: SessionJwtAlgorithm;
  readonly kid: string;
  readonly signingInput: string;
  readonly payload: string;
  readonly signature: Buffer;
}

function parseCompact(jwt: string): CompactJwt {
  const first = jwt.indexOf('.');
  const second = jwt.indexOf('.', first + 1);
  if (first < 0 || second < 0 || jwt.indexOf('.', second + 1) >= 0) throw malformed('A session JWT has three dot-separated parts.');
  const header = jwt.slice(0, first);
  const payload = jwt.slice(first + 1, second);
  const signature = jwt.slice(second + 1);
  // Buffer's base64url decoder skips characters outside the alphabet; refuse them instead.
  if (!SEGMENT.test(header) || !SEGMENT.test(payload) || !SEGMENT.test(signature)) throw malformed('A part is not base64url.');
  const fields = decodeJson(header, 'header');
  const { alg, kid, typ, crit } = fields;
  if (alg === 'none') throw malformed('Unsigned JWTs (alg "none") are refused.');
  if (typeof alg !== 'string' || !ALGORITHMS.has(alg))
    throw malformed(`The algorithm ${JSON.stringify(alg)} is not ES256, RS256 or EdDSA.`);
  if (typeof kid !== 'string' || kid === '' || kid.length > KID_LENGTH_MAX) throw malformed('The header has no "kid".');
  if (typ !== undefined && (typeof typ !== 'string' || typ.toUpperCase() !== 'JWT')) throw malformed('The header "typ" is not JWT.');
  // RFC 7515 4.1.11: an extension the verifier does not understand must make the token invalid.
  if (crit !== undefined) throw malformed('The header names critical extensions this verifier does not know.');
  return {
    algorithm: alg as SessionJwtAlgorithm,
    kid,
    signingInput: jwt.slice(0, second),
    payload,
    signature: Buffer.from(signature, 'base64url'),
  };
}

function checkSignature(token: CompactJwt, key: VerificationKey): void {
  // The key decides the algorithm; a header naming another one is a forgery attempt, not a format error.
  if (token.algorithm !== key.algorithm)
    throw invalidSignature(`The key "${token.kid}" verifies ${key.algorithm}, not ${token.algorithm}.`);
  let valid: boolean;
  try {
    const data = Buffer.from(token.signingInput, 'latin1');
    valid = verifySignature(key.algorithm === 'EdDSA' ? null : 'sha256', data, key.key, token.signature);
  } catch {
    valid = false;
  }
  if (!valid) throw invalidSignature('The signature does not match the token.');
}

interface ClaimRules {
  readonly issuer: string;
  readonly audience: string;
  readonly toleranceSeconds: number;
  readonly nowSeconds: number;
}

function checkClaims(claims: Record<string, unknown>, rules: ClaimRules): SessionJwtClaims {
  const { iss, aud, sub, sid, iat, exp, nbf, email, email_verified, roles, amr } = claims;
  if (!isNumber(exp) || !isNumber(iat) || (nbf !== undefined && !isNumber(nbf))) throw malformed('"exp", "iat" or "nbf" is not a number.');
  if (typeof sub !== 'string' || typeof sid !== 'string') throw malformed('"sub" or "sid" is not a string.');
  if (typeof email !== 'string' || typeof email_verified !== 'boolean' || !isStrings(roles) || !isStrings(amr)) {
    throw malformed('"email", "email_verified", "roles" or "amr" is missing or of the wrong type.');
  }
  if (iss !== rules.issuer)
    throw new SessionJwtError('wrong_issuer', `The token was issued by ${JSON.stringify(iss)}, not ${rules.issuer}.`);
  if (!(aud === rules.audience || (Array.isArray(aud) && aud.includes(rules.audience)))) {
    throw new SessionJwtError('wrong_audience', `The token is for ${JSON.stringify(aud)}, not ${rules.audience}.`);
  }
  if (exp <= rules.nowSeconds - rules.toleranceSeconds) throw new SessionJwtError('expired', `The token expired at ${isoTime(exp)}.`);
  if (nbf !== undefined && nbf > rules.nowSeconds + rules.toleranceSeconds) {
    throw new SessionJwtError('not_yet_valid', `The token is not valid before ${isoTime(nbf)}.`);
  }
  Object.freeze(roles);
  Object.freeze(amr);
  if (Array.isArray(aud)) Object.freeze(aud);
  return Object.freeze(claims) as unknown as SessionJwtClaims;
}

function decodeJson(segment: string, part: 'header' | 'payload'): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw malformed(`The ${part} is not JSON.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed(`The ${part} is not a JSON object.`);
  return value as Record<string, unknown>;
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function isoTime(seconds: number): string {
  const time = new Date(seconds * 1000);
  return Number.isNaN(time.getTime()) ? `${seconds} s` : time.toISOString();
}

function bounded(value: number | undefined, fallback: number, maximum: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0 || value > maximum) throw new RangeError(`${value} is not between 0 and ${maximum}.`);
  return value;
}

function malformed(message: string): SessionJwtError {
  return new SessionJwtError('malformed', message);
}

function invalidSignature(message: string): SessionJwtError {
  return new SessionJwtError('invalid_signature', message);
}

/** The options `verifySessionJwt` shares one default verifier for. */
export type VerifySessionJwtOptions = Pick<SessionJwtVerifierOptions, 'baseUrl' | 'projectId' | 'clockToleranceSeconds'>;

/** Bound on the default verifiers kept: one per project a process verifies for, rarely more than a few. */
const DEFAULT_VERIFIERS_MAX = 64;
const defaultVerifiers = new Map<string, SessionJwtVerifier>();

/**
 * Verifies `jwt` with the default verifier of (baseUrl, projectId, clockToleranceSeconds), made on
 * first use and kept, so its key set and verified tokens are shared by every call. For other
 * options (cache size, fetch, clock), keep your own `createSessionJwtVerifier(…)`.
 */
export function verifySessionJwt(jwt: string, options: VerifySessionJwtOptions): Promise<SessionJwtClaims> {
  const id = JSON.stringify([options.baseUrl.replace(/\/+$/, ''), options.projectId, options.clockToleranceSeconds]);
  let verifier = defaultVerifiers.get(id);
  if (verifier === undefined) {
    if (defaultVerifiers.size >= DEFAULT_VERIFIERS_MAX) defaultVerifiers.delete(defaultVerifiers.keys().next().value ?? '');
    verifier = createSessionJwtVerifier(options);
    defaultVerifiers.set(id, verifier);
  }
  return verifier.verify(jwt);
}
