import { isIP } from 'node:net';
import { ApiError } from './errors.js';

/** `localhost`, `::1` or an IPv4 address in 127.0.0.0/8. */
export function isLoopbackUrl(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/**
 * An application's redirect URI, for OAuth sign-ins and SSO connections alike
 * (docs/adr/0008-oauth.md): `https://`, or `http://` on a loopback host (RFC 8252, native and
 * local apps). No query or fragment, so that the parameters the service adds are the only ones and
 * the URI sent at a code exchange is the one registered; no credentials.
 */
export function checkRedirectUri(raw: string, param: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError('parameter_invalid', `${param} must be an absolute URL.`, { param });
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(url))) {
    throw new ApiError('parameter_invalid', `${param} must be https://, or http:// on localhost or a loopback address.`, { param });
  }
  if (url.search !== '' || raw.includes('?') || url.hash !== '' || raw.includes('#') || url.username !== '' || url.password !== '') {
    throw new ApiError('parameter_invalid', `${param} must not carry a query, fragment or credentials.`, { param });
  }
  return raw;
}
