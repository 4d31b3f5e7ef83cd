import { Api } from './api.js';
import { type OperationMethods, operationMethods, type SecretKeyOperationId, type SessionOperationId } from './operations.js';
import { Auth } from './resources/auth.js';
import { Sessions } from './resources/sessions.js';
import { Roles, Users } from './resources/users.js';
import { Wallets } from './resources/wallets.js';
import { Events, Webhooks } from './resources/webhooks.js';
import { type Credential, type RequestOptions, Transport, type TransportOptions } from './transport.js';
import type {
  ChangePasswordParams,
  DashboardSession,
  ConfirmTotpParams,
  DisableTotpParams,
  MfaStatus,
  Project,
  ReauthenticateParams,
  Reauthentication,
  SessionBalance,
  SessionBalanceParams,
  TotpActivation,
  TotpEnrolment,
  UpdateProjectParams,
  User,
} from './types.js';

export interface SvcClientOptions extends TransportOptions {
  /** The project's secret key, `svc_sk_…`. Keep it on your servers. */
  readonly apiKey: string;
  /**
   * A secret key in a web page is readable by anyone who opens it, so the client refuses to start
   * where `document` exists. Use `SvcSessionClient` with the user's session token in browsers.
   */
  readonly dangerouslyAllowBrowser?: boolean;
}

/** Where the dashboard page is served from: `baseUrl` is the page's own origin (`location.origin`). */
export type SvcDashboardClientOptions = TransportOptions;

export interface SvcSessionClientOptions extends TransportOptions {
  /** The end user's session token, `svc_ses_…` (from sign-up, log in, refresh or OAuth). */
  readonly sessionToken: string;
}

/**
 * The client for your servers, holding the project's secret key. Every namespace mirrors a part of
 * the API (docs/api.md); `operations` has a method for every operation; `withSession(token)`
 * makes the end-user client.
 *
 * ```ts
 * const svc = new SvcClient({ apiKey: process.env.SVC_SECRET_KEY!, baseUrl: 'https://api.example.com' });
 * const wallet = await svc.wallets.create({ user_id: user.id, currency: 'USD' });
 * ```
 */
export class SvcClient {
  readonly wallets: Wallets;
  readonly auth: Auth;
  readonly sessions: Sessions;
  readonly users: Users;
  readonly roles: Roles;
  readonly webhooks: Webhooks;
  readonly events: Events;
  /** The project: `update` sets its name or its passkey relying party (`webauthn`). */
  readonly project: {
    get(options?: RequestOptions): Promise<Project>;
    update(params: UpdateProjectParams, options?: RequestOptions): Promise<Project>;
  };
  /**
   * Every operation a secret key may call, by its `operationId` (see `operations.ts`): the
   * namespaces above cover the common ones with shorter signatures; these cover all of them,
   * organizations, invitations, SSO, OAuth providers, API keys, audit logs and stats included.
   */
  readonly operations: OperationMethods<SecretKeyOperationId>;
  readonly #api: Api;

  constructor(options: SvcClientOptions) {
    if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new TypeError('apiKey is required: the secret key "svc_sk_…".');
    if (typeof (globalThis as { document?: unknown }).document !== 'undefined' && options.dangerouslyAllowBrowser !== true) {
      throw new Error(
        'SvcClient holds a secret key and refuses to run in a browser. Use SvcSessionClient with the user’s session token there.',
      );
    }
    const api = new Api(new Transport(options), { kind: 'secret', key: options.apiKey });
    this.#api = api;
    this.wallets = new Wallets(api);
    this.auth = new Auth(api);
    this.sessions = new Sessions(api);
    this.users = new Users(api);
    this.roles = new Roles(api);
    this.webhooks = new Webhooks(api);
    this.events = new Events(api);
    this.project = {
      get: (requestOptions) => api.call('GET /v1/project', {}, requestOptions),
      update: (params, requestOptions) => api.call('PATCH /v1/project', { body: params }, requestOptions),
    };
    this.operations = operationMethods(api, new Set(['secret', 'any', 'public']));
  }

  /** The end-user client for this session token, with this client's address, fetch and retry settings. */
  withSession(sessionToken: string): SvcSessionClient {
    return SvcSessionClient.fromApi(this.#api.withSession(sessionToken));
  }
}

/**
 * The client for one end user, holding their session token: safe in a browser (the service must
 * list the page's origin in `CORS_ORIGINS`), in a mobile app, or on a server acting for the user.
 */
export class SvcSessionClient {
  readonly wallet: {
    /** `GET /v1/wallet/balance`: `{ balance: { credits, currency, available, categories }, transactions }` of the user's oldest active wallet, of their oldest active wallet in `currency`, or of `wallet_id`. */
    getBalance(params?: SessionBalanceParams, options?: RequestOptions): Promise<SessionBalance>;
  };
  readonly users: {
    /** `GET /v1/users/me`. */
    me(options?: RequestOptions): Promise<User>;
  };
  readonly mfa: {
    /** `GET /v1/users/me/mfa`: the user's second factors, never a secret. */
    status(options?: RequestOptions): Promise<MfaStatus>;
    /** `POST /v1/users/me/mfa/totp` → `{ secret, otpauth_url, status: 'pending' }`: show the QR code of `otpauth_url`. */
    enrollTotp(options?: RequestOptions): Promise<TotpEnrolment>;
    /** `POST /v1/users/me/mfa/totp/verify` with a code → `{ status: 'active', recovery_codes }` (shown once). */
    confirmTotp(params: ConfirmTotpParams, options?: RequestOptions): Promise<TotpActivation>;
    /** `DELETE /v1/users/me/mfa/totp` with a current code or a recovery code. */
    disableTotp(params: DisableTotpParams, options?: RequestOptions): Promise<MfaStatus>;
  };
  readonly auth: {
    /**
     * `POST /v1/users/me/reauthenticate` with the password, an authenticator code or a recovery
     * code. Adding a passkey, enrolling or removing an authenticator and changing the password
     * need a sign-in or reauthentication within `REAUTH_WINDOW_SECONDS`; otherwise they fail with
     * 403 `reauthentication_required`: call this, then send the request again.
     */
    reauthenticate(params: ReauthenticateParams, options?: RequestOptions): Promise<Reauthentication>;
    /** `POST /v1/auth/password/change`; the user's other sessions are revoked, this one stays. Needs a recent sign-in. */
    changePassword(params: ChangePasswordParams, options?: RequestOptions): Promise<User>;
    /** `POST /v1/auth/logout`: ends this session; the token is refused from then on. */
    logout(options?: RequestOptions): Promise<void>;
  };
  /** Every operation a session token may call, by its `operationId`, e.g. `acceptInvitation`, `listCurrentUserOrganizations`. */
  readonly operations: OperationMethods<SessionOperationId>;

  constructor(options: SvcSessionClientOptions) {
    if (typeof options.sessionToken !== 'string' || options.sessionToken === '') throw new TypeError('sessionToken is required.');
    const api = new Api(new Transport(options), { kind: 'session', token: options.sessionToken });
    this.wallet = {
      getBalance: (params = {}, requestOptions) => api.call('GET /v1/wallet/balance', { query: params }, requestOptions),
    };
    this.users = { me: (requestOptions) => api.call('GET /v1/users/me', {}, requestOptions) };
    this.mfa = {
      status: (requestOptions) => api.call('GET /v1/users/me/mfa', {}, requestOptions),
      enrollTotp: (requestOptions) => api.call('POST /v1/users/me/mfa/totp', {}, requestOptions),
      confirmTotp: (params, requestOptions) => api.call('POST /v1/users/me/mfa/totp/verify', { body: params }, requestOptions),
      disableTotp: (params, requestOptions) => api.call('DELETE /v1/users/me/mfa/totp', { body: params }, requestOptions),
    };
    this.auth = {
      reauthenticate: (params, requestOptions) => api.call('POST /v1/users/me/reauthenticate', { body: params }, requestOptions),
      changePassword: (params, requestOptions) => api.call('POST /v1/auth/password/change', { body: params }, requestOptions),
      logout: async (requestOptions) => {
        await api.call('POST /v1/auth/logout', { body: {} }, requestOptions);
      },
    };
    this.operations = operationMethods(api, new Set(['session', 'any', 'public']));
  }

  /** @internal */
  static fromApi(api: Api): SvcSessionClient {
    if (api.credential.kind !== 'session') throw new TypeError('a session client needs a session credential');
    return new SvcSessionClient({ ...api.transport.options, sessionToken: api.credential.token });
  }
}

/**
 * The client of the service's own dashboard page (`/dashboard`, docs/adr/0012-dashboard.md), served
 * by the service on the origin it calls. It holds no secret: `signIn` hands the pasted secret key to
 * the service once, which answers with an HttpOnly cookie session; the browser sends that cookie
 * with same-origin requests only, and every change carries the session's CSRF token
 * (`X-CSRF-Token`). The cookie session may call what a secret key may, through `operations`.
 *
 * ```ts
 * const svc = new SvcDashboardClient({ baseUrl: location.origin });
 * await svc.signIn(pastedSecretKey); // or: await svc.session() after a reload
 * const page = await svc.operations.listUsers({ query: { limit: 20 } });
 * ```
 */
export class SvcDashboardClient {
  /** Every operation a secret key may call, by its `operationId`, with the cookie session as the credential. */
  readonly operations: OperationMethods<SecretKeyOperationId>;
  readonly #transport: Transport;
  readonly #credential: Credential = { kind: 'cookie', csrfToken: () => this.#csrfToken };
  #csrfToken: string | undefined;

  constructor(options: SvcDashboardClientOptions) {
    this.#transport = new Transport(options);
    const api = new Api(this.#transport, this.#credential);
    this.operations = operationMethods(api, new Set(['secret', 'any', 'public']));
  }

  /** `POST /dashboard/api/session`: signs in with a secret key; the key is not kept. */
  async signIn(secretKey: string, options?: RequestOptions): Promise<DashboardSession> {
    return this.#remember(await this.#session('POST', options, { secret_key: secretKey }));
  }

  /** `GET /dashboard/api/session`: the session of the browser's cookie; 401 `dashboard_session_invalid` without one. */
  async session(options?: RequestOptions): Promise<DashboardSession> {
    return this.#remember(await this.#session('GET', options));
  }

  /** `DELETE /dashboard/api/session`: ends the session and clears its cookie. */
  async signOut(options?: RequestOptions): Promise<void> {
    try {
      await this.#session('DELETE', options);
    } finally {
      this.#csrfToken = undefined;
    }
  }

  #remember(session: DashboardSession): DashboardSession {
    this.#csrfToken = session.csrf_token;
    return session;
  }

  #session(method: 'GET' | 'POST' | 'DELETE', options: RequestOptions | undefined, body?: object): Promise<DashboardSession> {
    // A sign-in is not stored for replay (the route is not under /v1), so it is never sent twice.
    return this.#transport.request<DashboardSession>(
      {
        method,
        path: '/dashboard/api/session',
        credential: this.#credential,
        retry: method === 'GET' ? 'read' : 'unkeyed',
        ...(body === undefined ? {} : { body }),
      },
      options,
    );
  }
}
