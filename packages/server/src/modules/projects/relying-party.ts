import { ApiError } from '../../lib/errors.js';

/**
 * A project's WebAuthn relying party: who its passkeys belong to (docs/api.md, "Passkeys";
 * docs/adr/0017-passkeys.md).
 *
 * - `rp_id` is a host name, lower case, never an IP address (WebAuthn forbids them): the domain
 *   the passkeys are bound to, e.g. `example.com`. `localhost` is accepted for development.
 * - `origins` are the exact web origins the ceremonies may run on: `https://` origins whose host
 *   is `rp_id` or one of its subdomains, or `http://localhost[:port]` (and `*.localhost`), which
 *   browsers treat as secure. Anything else could never complete a ceremony, so it is refused
 *   here rather than at the first sign-in.
 */
export interface RelyingParty {
  readonly rp_id: string;
  readonly rp_name: string;
  readonly origins: readonly string[];
}

export const RP_ID_LENGTH_MAX = 253;
export const RP_NAME_LENGTH_MAX = 100;
export const ORIGINS_MAX = 10;
export const ORIGIN_LENGTH_MAX = 300;

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Checks a relying party from a request and returns it normalized (`rp_name` trimmed); a refusal names the field. */
export function checkRelyingParty(input: RelyingParty, param = 'webauthn'): RelyingParty {
  const rpId = input.rp_id;
  if (!isHostName(rpId)) {
    throw new ApiError(
      'parameter_invalid',
      'rp_id is a lower-case host name such as `example.com` or `localhost`: no scheme, port, path or IP address.',
      { param: `${param}.rp_id` },
    );
  }
  const rpName = input.rp_name.trim();
  if (rpName === '' || rpName.length > RP_NAME_LENGTH_MAX) {
    throw new ApiError('parameter_invalid', `rp_name is 1 to ${RP_NAME_LENGTH_MAX} characters.`, { param: `${param}.rp_name` });
  }
  if (input.origins.length === 0 || input.origins.length > ORIGINS_MAX) {
    throw new ApiError('parameter_invalid', `origins lists 1 to ${ORIGINS_MAX} origins.`, { param: `${param}.origins` });
  }
  const seen = new Set<string>();
  input.origins.forEach((origin, index) => {
    const where = `${param}.origins[${index}]`;
    checkOrigin(origin, rpId, where);
    if (seen.has(origin)) throw new ApiError('parameter_invalid', `${origin} is listed twice.`, { param: where });
    seen.add(origin);
  });
  return { rp_id: rpId, rp_name: rpName, origins: [...input.origins] };
}

function checkOrigin(origin: string, rpId: string, param: string): void {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new ApiError('parameter_invalid', `${origin} is not an origin such as https://app.example.com.`, { param });
  }
  // An origin is scheme, host and port only, in the browser's own spelling: what clientDataJSON carries.
  if (url.origin !== origin) {
    throw new ApiError(
      'parameter_invalid',
      `An origin is scheme, host and optional port, exactly as the browser sends it (${url.origin}): no path, query, trailing slash or default port.`,
      { param },
    );
  }
  const localhost = url.hostname === 'localhost' || url.hostname.endsWith('.localhost');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && localhost)) {
    throw new ApiError('parameter_invalid', 'An origin is https://, or http:// on localhost only.', { param });
  }
  if (url.hostname !== rpId && !url.hostname.endsWith(`.${rpId}`)) {
    throw new ApiError(
      'parameter_invalid',
      `${origin} is not on rp_id ${rpId} or one of its subdomains; passkeys could not be used there.`,
      {
        param,
      },
    );
  }
}

function isHostName(value: string): boolean {
  if (value.length === 0 || value.length > RP_ID_LENGTH_MAX) return false;
  const labels = value.split('.');
  if (!labels.every((label) => LABEL.test(label))) return false;
  // The last label of a host name is never all digits: that is an IPv4 address.
  return !/^[0-9]+$/.test(labels[labels.length - 1] ?? '');
}

/** The stored JSON of a relying party, or undefined for none (a null column). */
export function parseRelyingParty(stored: string | null): RelyingParty | undefined {
  if (stored === null) return undefined;
  const parsed = JSON.parse(stored) as RelyingParty;
  return { rp_id: parsed.rp_id, rp_name: parsed.rp_name, origins: parsed.origins };
}
