import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ApiError, ERROR_CATALOG, errorTypeForStatus, renderErrorCatalogMarkdown } from './errors.js';

const DOCS = new URL('../../../../docs/errors.md', import.meta.url);

/** The codes docs/api.md section 2 requires at least. */
const CONTRACT_CODES = [
  'credential_missing',
  'body_invalid_json',
  'body_too_large',
  'unsupported_media_type',
  'parameter_missing',
  'parameter_invalid',
  'parameter_unknown',
  'resource_missing',
  'route_not_found',
  'invalid_api_key',
  'secret_key_required',
  'session_token_required',
  'session_invalid',
  'session_expired',
  'session_revoked',
  'permission_denied',
  'rate_limited',
  'insufficient_credits',
  'currency_mismatch',
  'same_wallet',
  'wallet_frozen',
  'wallet_closed',
  'wallet_not_empty',
  'balance_limit_exceeded',
  'idempotency_key_reused',
  'idempotency_key_in_use',
  'email_taken',
  'invalid_credentials',
  'password_too_weak',
  'user_banned',
  'token_invalid',
  'token_expired',
  'refresh_token_invalid',
  'refresh_token_reused',
  'oauth_provider_unknown',
  'oauth_provider_not_configured',
  'oauth_state_invalid',
  'oauth_exchange_failed',
  'redirect_uri_not_allowed',
  'webhook_url_invalid',
  'webhook_url_forbidden',
  'event_type_unknown',
  'internal_error',
  'service_unavailable',
];

describe('error catalog', () => {
  it('is documented: docs/errors.md equals what the catalog renders (run `npm run docs:errors`)', () => {
    expect(readFileSync(DOCS, 'utf8')).toBe(renderErrorCatalogMarkdown());
  });

  it('lists every code docs/errors.md names, and no other', () => {
    const documented = [...readFileSync(DOCS, 'utf8').matchAll(/^\| `([a-z_]+)` \|/gm)].map((match) => match[1]);
    expect(documented.sort()).toEqual(Object.keys(ERROR_CATALOG).sort());
  });

  it('has every code the contract requires', () => {
    expect(Object.keys(ERROR_CATALOG)).toEqual(expect.arrayContaining(CONTRACT_CODES));
  });

  it('has snake_case codes and statuses whose type the contract fixes', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect([400, 401, 403, 404, 405, 408, 409, 413, 414, 415, 422, 429, 431, 500, 503]).toContain(entry.status);
    }
    expect(errorTypeForStatus(422)).toBe('invalid_request_error');
    expect(errorTypeForStatus(401)).toBe('authentication_error');
    expect(errorTypeForStatus(403)).toBe('permission_error');
    expect(errorTypeForStatus(429)).toBe('rate_limit_error');
    expect(errorTypeForStatus(503)).toBe('api_error');
  });

  it('gives an ApiError the status and type of its code', () => {
    const error = new ApiError('insufficient_credits', 'Wallet has 40 credits; 100 requested.', { param: 'amount' });
    expect(error).toMatchObject({ status: 422, type: 'invalid_request_error', param: 'amount' });
  });
});
