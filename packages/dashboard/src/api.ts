/**
 * The page's only way to the server: same-origin requests with the HttpOnly session cookie, the
 * CSRF token on every change, and an Idempotency-Key on every POST. The secret key never reaches
 * this code after sign-in: it is sent once to /dashboard/api/session and forgotten.
 */

export interface Session {
  readonly csrf_token: string;
  readonly expires_at: string;
  readonly project_id: string;
  readonly key_id: string;
}

export interface List<T> {
  readonly object: 'list';
  readonly data: T[];
  readonly has_more: boolean;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly param: string | undefined;

  constructor(status: number, code: string, message: string, param?: string) {
    super(message);
    this.status = status;
    this.code = code;
    this.param = param;
  }

  /** True when the session is gone (signed out elsewhere, expired, its key revoked). */
  get signedOut(): boolean {
    return this.status === 401;
  }
}

let csrfToken = '';
const signedOutListeners = new Set<() => void>();

/** Called whenever a request finds the session gone, so the page can show the sign-in form. */
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

/** A random Idempotency-Key; made once per user action, so a retried click is not applied twice. */
export function newIdempotencyKey(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return `dash_${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

export interface RequestOptions {
  readonly body?: unknown;
  readonly idempotencyKey?: string;
}

export async function request<T>(
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (method === 'POST') headers['idempotency-key'] = options.idempotencyKey ?? newIdempotencyKey();
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
  } catch {
    throw new ApiError(0, 'network_error', 'The service did not answer. Check the connection and try again.');
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string; param?: string } } | undefined)?.error;
    const apiError = new ApiError(
      response.status,
      error?.code ?? 'http_error',
      error?.message ?? `The service answered ${response.status}.`,
      error?.param,
    );
    if (apiError.signedOut && !path.startsWith('/dashboard/api/session')) {
      forgetSignedIn();
      for (const listener of signedOutListeners) listener();
    }
    throw apiError;
  }
  return parsed as T;
}

export const get = <T>(path: string): Promise<T> => request<T>('GET', path);
export const post = <T>(path: string, body?: unknown, idempotencyKey?: string): Promise<T> =>
  request<T>('POST', path, { ...(body === undefined ? {} : { body }), ...(idempotencyKey === undefined ? {} : { idempotencyKey }) });
export const patch = <T>(path: string, body: unknown): Promise<T> => request<T>('PATCH', path, { body });
export const put = <T>(path: string, body: unknown): Promise<T> => request<T>('PUT', path, { body });
export const del = <T>(path: string): Promise<T> => request<T>('DELETE', path);

/** `path?key=value…`, leaving out empty values. */
export function withQuery(path: string, query: Readonly<Record<string, string | number | undefined>>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
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
    const session = await request<Session>('GET', '/dashboard/api/session');
    csrfToken = session.csrf_token;
    return session;
  } catch (error) {
    if (error instanceof ApiError && error.signedOut) {
      // The session ended (expired, or its key revoked): the next load shows the sign-in form at once.
      forgetSignedIn();
      return undefined;
    }
    throw error;
  }
}

export async function signIn(secretKey: string): Promise<Session> {
  const session = await request<Session>('POST', '/dashboard/api/session', { body: { secret_key: secretKey } });
  csrfToken = session.csrf_token;
  return session;
}

export async function signOut(): Promise<void> {
  try {
    await request<undefined>('DELETE', '/dashboard/api/session');
  } finally {
    csrfToken = '';
  }
}
