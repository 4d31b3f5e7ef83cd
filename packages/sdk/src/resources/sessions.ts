import type { Api } from '../api.js';
import type { RequestOptions } from '../transport.js';
import type { RefreshSessionParams, Session, UserAndSession, ValidateSessionParams, ValidateSessionResult } from '../types.js';

/** `/v1/sessions/*` with the secret key: check, refresh and revoke end users' sessions. */
export class Sessions {
  readonly #api: Api;
  constructor(api: Api) {
    this.#api = api;
  }

  /** `{ valid: true, user, session }` or `{ valid: false, reason: 'expired' | 'revoked' | 'not_found' }`; never 404. */
  validate(params: ValidateSessionParams, options?: RequestOptions): Promise<ValidateSessionResult> {
    return this.#api.call('POST /v1/sessions/validate', { body: params }, options);
  }

  /**
   * A new session and refresh token for a refresh token, which is single use: presenting a used one
   * revokes the whole chain (401 `refresh_token_reused`). Never retried after a lost answer for
   * that reason, only after a 429.
   */
  refresh(params: RefreshSessionParams, options?: RequestOptions): Promise<UserAndSession> {
    return this.#api.call('POST /v1/sessions/refresh', { body: params }, options);
  }

  /** `POST /v1/sessions/{id}/revoke`; `id` is `svc_ses_<ref>` (or the whole token). Reason `revoked`. */
  revoke(id: string, options?: RequestOptions): Promise<Session> {
    return this.#api.call('POST /v1/sessions/{id}/revoke', { path: { id } }, options);
  }
}
