/**
 * The page's only way to the server: the SDK's dashboard client (`SvcDashboardClient`, @svc/sdk),
 * on this page's origin, with the HttpOnly session cookie, the CSRF token on every change, and an
 * Idempotency-Key on every POST. The secret key never reaches this code after sign-in: it is sent
 * once to /dashboard/api/session and forgotten.
 */
import { type DashboardSession, type ResponseInfo, ServiceError, SvcDashboardClient } from '@svc/sdk';

export type Session = DashboardSession;

const signedOutListeners = new Set<() => void>();

/** Called whenever a request finds the session gone, so the page can show the sign-in form. */
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

/** A 401 from /v1 means the session is gone (signed out elsewhere, expired, its key revoked). */
function noticeSignedOut(response: ResponseInfo): void {
  if (response.status !== 401 || !response.path.startsWith('/v1/')) return;
  forgetSignedIn();
  for (const listener of signedOutListeners) listener();
}

export const svc = new SvcDashboardClient({ baseUrl: window.location.origin, onResponse: noticeSignedOut });
export const operations = svc.operations;

/** A random Idempotency-Key; made once per user action, so a retried click is not applied twice. */
export function newIdempotencyKey(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return `dash_${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * The readable marker cookie the service sets beside the HttpOnly session cookie, and clears on
 * sign-out (packages/server/src/modules/dashboard/dashboard.service.ts). Without it there is no
 * session to ask about: the sign-in page opens without a request answered 401.
 */
const SIGNED_IN_COOKIE = 'svc_dashboard_signed_in';

function maybeSignedIn(): boolean {
  return document.cookie.split(';').some((part) => part.trim() === `${SIGNED_IN_COOKIE}=1`);
}

function forgetSignedIn(): void {
  document.cookie = `${SIGNED_IN_COOKIE}=; Path=/; Max-Age=0; SameSite=Strict`;
}

/** The session behind the cookie, or undefined when signed out; asks the server only when the marker says a session may exist. */
export async function loadSession(): Promise<Session | undefined> {
  if (!maybeSignedIn()) return undefined;
  try {
    return await svc.session();
  } catch (error) {
    if (isSignedOut(error)) {
      // The session ended (expired, or its key revoked): the next load shows the sign-in form at once.
      forgetSignedIn();
      return undefined;
    }
    throw error;
  }
}

export const signIn = (secretKey: string): Promise<Session> => svc.signIn(secretKey);
export const signOut = (): Promise<void> => svc.signOut();

/** True for an error answer of the service with this code. */
export function hasCode(error: unknown, code: string): boolean {
  return error instanceof ServiceError && error.code === code;
}

function isSignedOut(error: unknown): boolean {
  return error instanceof ServiceError && error.status === 401;
}
