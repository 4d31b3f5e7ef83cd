import { randomBytes } from 'node:crypto';
import { randomBase62 } from '../../lib/ids.js';

export const SESSION_TOKEN_PREFIX = 'svc_ses_';
export const REFRESH_TOKEN_PREFIX = 'svc_rt_';
/** `<ref>`: 24 base62 characters (≈ 143 bits), the public half that names the session. */
const SESSION_REF_LENGTH = 24;
/** `<secret>`: 32 random bytes, 43 base64url characters. */
const SECRET_BYTES = 32;

const SESSION_TOKEN_PATTERN = /^svc_ses_[0-9A-Za-z]{24}\.[A-Za-z0-9_-]{43}$/;
const SESSION_NAME_PATTERN = /^svc_ses_[0-9A-Za-z]{24}$/;
const REFRESH_TOKEN_PATTERN = /^svc_rt_[A-Za-z0-9_-]{43}$/;

export interface NewSessionToken {
  /** `svc_ses_<ref>.<secret>`: the credential, shown to the client once. */
  readonly token: string;
  /** `svc_ses_<ref>`: how the session is named everywhere else (events, lists, revoke); the row's id. */
  readonly name: string;
}

/** A session token in the form of docs/api.md section 3. */
export function newSessionToken(): NewSessionToken {
  const name = `${SESSION_TOKEN_PREFIX}${randomBase62(SESSION_REF_LENGTH)}`;
  return { token: `${name}.${randomBytes(SECRET_BYTES).toString('base64url')}`, name };
}

export function newRefreshToken(): string {
  return `${REFRESH_TOKEN_PREFIX}${randomBytes(SECRET_BYTES).toString('base64url')}`;
}

/** The session name of a well-formed token, or undefined. */
export function sessionNameOfToken(token: string): string | undefined {
  return SESSION_TOKEN_PATTERN.test(token) ? token.slice(0, token.indexOf('.')) : undefined;
}

/** The session name of a well-formed token or name (`svc_ses_<ref>`), or undefined. */
export function sessionNameOf(tokenOrName: string): string | undefined {
  if (SESSION_NAME_PATTERN.test(tokenOrName)) return tokenOrName;
  return sessionNameOfToken(tokenOrName);
}

export function isRefreshToken(value: string): boolean {
  return REFRESH_TOKEN_PATTERN.test(value);
}
