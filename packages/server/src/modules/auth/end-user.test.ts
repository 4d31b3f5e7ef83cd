import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { describe, expect, inject, it, vi } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';
import { auditReader } from '../audit/audit.testing.js';
import { bearer, signup, type SignupBody, strongPassword, uniqueEmail } from './auth.testing.js';

/** Counts password checks, to prove that a refused attempt never reaches one. */
const passwordChecks = vi.hoisted(() => ({ count: 0 }));
vi.mock('./passwords.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('./passwords.js')>();
  return {
    ...original,
    verifyPassword: (hash: string, password: string) => {
      passwordChecks.count += 1;
      return original.verifyPassword(hash, password);
    },
  };
});

const redisUrl = inject('redisUrl');
/** The calling application's own address: every request of these tests comes from it. */
const APP_SERVER = '10.0.0.5';

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  const body = response.json<{ error: { code: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code, param: body.error.param }).toEqual({ status, code, param });
}

const BACKENDS = [
  { name: 'memory', env: {}, skip: false },
  { name: 'Redis', env: { REDIS_URL: redisUrl }, skip: redisUrl === '' },
] as const;

describeEachDialect('log-in throttling per end user', (dialect) => {
  for (const backend of BACKENDS) {
    describe.skipIf(backend.skip)(`throttle in ${backend.name}`, () => {
      const ctx = useTestService(dialect, { env: backend.env });
      const call = (options: InjectOptions) => ctx().service.app.inject(options);
      /** A log in for the end user at `endUserIp`, sent by the application at APP_SERVER, or by the end user itself when `direct`. */
      const login = (email: string, password: string, endUserIp: string, options: { direct?: boolean } = {}) =>
        call({
          method: 'POST',
          url: '/v1/auth/login',
          headers: { ...ctx().auth, 'x-end-user-ip': endUserIp },
          payload: { email, password },
          remoteAddress: options.direct === true ? endUserIp : APP_SERVER,
        });

      // Regression: log in is a server-to-server call, so throttling keyed on the
      // calling application's address, and 10 wrong passwords from anyone made the owner's right
      // one answer 429.
      it('answers 429 after 10 failures from one end-user address, while the owner logs in from another', async () => {
        const account = await signup(call, ctx().secretKey);
        for (let failure = 0; failure < 10; failure += 1)
          expectError(await login(account.email, 'wrong-password', '198.51.100.1'), 401, 'invalid_credentials');
        const refused = await login(account.email, account.password, '198.51.100.1');
        expectError(refused, 429, 'rate_limited');
        const retryAfter = Number(refused.headers['retry-after']);
        expect(retryAfter).toBeGreaterThan(14 * 60);
        expect(retryAfter).toBeLessThanOrEqual(15 * 60);
        expect((await login(account.email, account.password, '203.0.113.9')).statusCode).toBe(200);
        // The attacker's address stays refused: the owner's success elsewhere forgives nothing there.
        expectError(await login(account.email, account.password, '198.51.100.1'), 429, 'rate_limited');
      });

      // Requests that come from the end users' own addresses, so that the old code (which had no
      // limit per email) lets the 101st attempt through.
      it('refuses every address once the email has 100 failures from all addresses together', async () => {
        const account = await signup(call, ctx().secretKey);
        const failures = await Promise.all(
          Array.from({ length: 100 }, (_, index) =>
            login(account.email, 'wrong-password', `192.0.2.${Math.floor(index / 10) + 1}`, { direct: true }),
          ),
        );
        expect(failures.map((response) => response.statusCode)).toEqual(Array.from({ length: 100 }, () => 401));
        const checksBefore = passwordChecks.count;
        const refused = await login(account.email, account.password, '203.0.113.50', { direct: true });
        expectError(refused, 429, 'rate_limited');
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(14 * 60);
        expect(passwordChecks.count).toBe(checksBefore);
        // Another email is not affected.
        const other = await signup(call, ctx().secretKey);
        expect((await login(other.email, other.password, '203.0.113.50')).statusCode).toBe(200);
      });

      // Regression: the check ran before the password and the count after it,
      // so concurrent guesses all passed the check.
      it('lets exactly 10 of 30 concurrent wrong guesses from one address reach a password check', async () => {
        const account = await signup(call, ctx().secretKey);
        const checksBefore = passwordChecks.count;
        const responses = await Promise.all(Array.from({ length: 30 }, () => login(account.email, 'wrong-password', '198.51.100.30')));
        const statuses = responses.map((response) => response.statusCode);
        expect(statuses.filter((status) => status === 401)).toHaveLength(10);
        expect(statuses.filter((status) => status === 429)).toHaveLength(20);
        expect(passwordChecks.count - checksBefore).toBe(10);
        expectError(await login(account.email, account.password, '198.51.100.30'), 429, 'rate_limited');
        expect((await login(account.email, account.password, '198.51.100.31')).statusCode).toBe(200);
      });

      it('counts the addresses of one IPv6 /64 as one, and an IPv4-mapped address as its IPv4 address', async () => {
        const account = await signup(call, ctx().secretKey);
        // Ten failures spread over one /64: a guesser who owns it gains nothing by changing address.
        for (let failure = 0; failure < 10; failure += 1)
          expectError(await login(account.email, 'wrong-password', `2001:db8:7:8::${failure + 1}`), 401, 'invalid_credentials');
        expectError(await login(account.email, account.password, '2001:DB8:7:8:ffff:ffff:ffff:ffff'), 429, 'rate_limited');
        expect((await login(account.email, account.password, '2001:db8:7:9::1')).statusCode).toBe(200);

        const other = await signup(call, ctx().secretKey);
        for (let failure = 0; failure < 10; failure += 1)
          expectError(await login(other.email, 'wrong-password', '::ffff:198.51.100.60'), 401, 'invalid_credentials');
        expectError(await login(other.email, other.password, '198.51.100.60'), 429, 'rate_limited');
        expect((await login(other.email, other.password, '198.51.100.61')).statusCode).toBe(200);
      });

      it('a success forgets the failures of its address', async () => {
        const account = await signup(call, ctx().secretKey);
        for (let failure = 0; failure < 9; failure += 1)
          expect((await login(account.email, 'wrong-password', '198.51.100.40')).statusCode).toBe(401);
        expect((await login(account.email, account.password, '198.51.100.40')).statusCode).toBe(200);
        for (let failure = 0; failure < 9; failure += 1)
          expect((await login(account.email, 'wrong-password', '198.51.100.40')).statusCode).toBe(401);
        expect((await login(account.email, account.password, '198.51.100.40')).statusCode).toBe(200);
      });
    });
  }
});

interface SignupAnswer {
  readonly status: number;
  readonly requestId: string | undefined;
  readonly body: SignupBody;
}

/**
 * A request over loopback, as a real client sends it: Node's HTTP client writes header text as
 * latin1, so a header given as the latin1 reading of UTF-8 bytes goes out as those bytes.
 */
function postOverSocket(port: number, path: string, options: { headers: Record<string, string>; body: object }): Promise<SignupAnswer> {
  const payload = JSON.stringify(options.body);
  const headers = Object.fromEntries(
    Object.entries({ ...options.headers, 'content-type': 'application/json' }).map(([name, value]) => [
      name,
      Buffer.from(value, 'utf8').toString('latin1'),
    ]),
  );
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        const requestId = response.headers['request-id'];
        resolve({
          status: response.statusCode ?? 0,
          requestId: typeof requestId === 'string' ? requestId : undefined,
          body: JSON.parse(text) as SignupBody,
        });
      });
    });
    request.on('error', reject);
    // As a Buffer: a string body would be joined to the headers and the whole written as UTF-8.
    request.end(Buffer.from(payload, 'utf8'));
  });
}

interface SessionRow {
  id: string;
  ip: string | null;
  user_agent: string | null;
}

describeEachDialect('X-End-User-IP and X-End-User-Agent', (dialect) => {
  const ctx = useTestService(dialect);
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const endUser = (ip: string, agent?: string) => ({ 'x-end-user-ip': ip, ...(agent === undefined ? {} : { 'x-end-user-agent': agent }) });
  const nameOf = (token: string) => token.slice(0, token.indexOf('.'));

  async function sessionsOf(userId: string): Promise<SessionRow[]> {
    const response = await call({ method: 'GET', url: `/v1/users/${userId}/sessions`, headers: ctx().auth });
    return response.json<{ data: SessionRow[] }>().data;
  }

  it('are the ip and user_agent of the sessions of sign-up, log in and refresh, and of their audit entries', async () => {
    const email = uniqueEmail('enduser');
    const password = strongPassword();
    const headers = { ...ctx().auth, 'user-agent': 'app-server/1.0' };
    const signedUp = await call({
      method: 'POST',
      url: '/v1/auth/signup',
      headers: { ...headers, ...endUser('198.51.100.7', 'Firefox/140') },
      payload: { email, password },
      remoteAddress: APP_SERVER,
    });
    expect(signedUp.statusCode).toBe(201);
    const loggedIn = await call({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { ...headers, ...endUser('2001:DB8:0::7') },
      payload: { email, password },
      remoteAddress: APP_SERVER,
    });
    expect(loggedIn.statusCode).toBe(200);
    const refreshed = await call({
      method: 'POST',
      url: '/v1/sessions/refresh',
      headers: { ...headers, ...endUser('::ffff:192.0.2.77', 'Safari/26') },
      payload: { refresh_token: loggedIn.json().session.refresh_token },
      remoteAddress: APP_SERVER,
    });
    expect(refreshed.statusCode).toBe(200);

    const userId = signedUp.json().user.id as string;
    const sessions = new Map((await sessionsOf(userId)).map((session) => [session.id, session]));
    expect(sessions.get(nameOf(signedUp.json().session.id))).toMatchObject({ ip: '198.51.100.7', user_agent: 'Firefox/140' });
    // Addresses are kept in one spelling; without X-End-User-Agent the connection's agent stays.
    expect(sessions.get(nameOf(refreshed.json().session.id))).toMatchObject({ ip: '192.0.2.77', user_agent: 'Safari/26' });
    const audit = auditReader(ctx().service, ctx().secretKey);
    expect(await audit.of(signedUp)).toEqual([
      expect.objectContaining({ action: 'user.signup', ip: '198.51.100.7', user_agent: 'Firefox/140' }),
    ]);
    expect(await audit.of(loggedIn)).toEqual([
      expect.objectContaining({ action: 'user.login', ip: '2001:db8::7', user_agent: 'app-server/1.0' }),
    ]);
  });

  it('without them, the connection is the client', async () => {
    const account = await signup(call, ctx().secretKey);
    const response = await call({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { ...ctx().auth, 'user-agent': 'app-server/1.0' },
      payload: { email: account.email, password: account.password },
      remoteAddress: APP_SERVER,
    });
    const session = (await sessionsOf(account.userId)).find((row) => row.id === nameOf(response.json().session.id));
    expect(session).toMatchObject({ ip: APP_SERVER, user_agent: 'app-server/1.0' });
  });

  it('refuse a malformed X-End-User-IP with 400 parameter_invalid naming the header', async () => {
    for (const bad of ['not-an-ip', '', '198.51.100.1, 198.51.100.2', '198.51.100.256', '01.2.3.4', 'fe80::1%eth0', '2001:db8::1/64']) {
      const response = await call({ method: 'GET', url: '/v1/users', headers: { ...ctx().auth, 'x-end-user-ip': bad } });
      expectError(response, 400, 'parameter_invalid', 'X-End-User-IP');
    }
  });

  it('cut X-End-User-Agent at 500 characters', async () => {
    const account = await signup(call, ctx().secretKey);
    const response = await call({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { ...ctx().auth, ...endUser('198.51.100.8', 'A'.repeat(2000)) },
      payload: { email: account.email, password: account.password },
    });
    const session = (await sessionsOf(account.userId)).find((row) => row.id === nameOf(response.json().session.id));
    expect(session?.user_agent).toBe('A'.repeat(500));
  });

  // Regression: Node gives header bytes one per character (latin1), so an agent sent as UTF-8 was
  // stored as "Mozilla/5.0 (Ã\u009cnÃ¯code)".
  it('read X-End-User-Agent as UTF-8: the session and the audit entry show it as sent', async () => {
    await ctx().service.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (ctx().service.app.server.address() as AddressInfo).port;
    const agent = 'Mozilla/5.0 (Ünïcode; 日本; 😀)';
    const answer = await postOverSocket(port, '/v1/auth/signup', {
      headers: { ...ctx().auth, 'x-end-user-ip': '198.51.100.20', 'x-end-user-agent': agent },
      body: { email: uniqueEmail('agent'), password: strongPassword() },
    });
    expect(answer.status).toBe(201);
    const session = (await sessionsOf(answer.body.user.id)).find((row) => row.id === nameOf(answer.body.session.id));
    expect(session?.user_agent).toBe(agent);
    const entries = await auditReader(ctx().service, ctx().secretKey).all({ action: 'user.signup' });
    expect(entries.find((entry) => entry.request_id === answer.requestId)?.user_agent).toBe(agent);
  });

  it('are ignored on session-token routes: a session holder cannot choose its address', async () => {
    const account = await signup(call, ctx().secretKey);
    const me = await call({ method: 'GET', url: '/v1/users/me', headers: { ...bearer(account.token), 'x-end-user-ip': 'not-an-ip' } });
    expect(me.statusCode).toBe(200);
    const change = await call({
      method: 'POST',
      url: '/v1/auth/password/change',
      headers: { ...bearer(account.token), 'user-agent': 'browser/1', ...endUser('198.51.100.9', 'spoofed') },
      payload: { current_password: account.password, new_password: strongPassword('new') },
      remoteAddress: '203.0.113.66',
    });
    expect(change.statusCode).toBe(200);
    const audit = auditReader(ctx().service, ctx().secretKey);
    expect(await audit.of(change)).toEqual([
      expect.objectContaining({ action: 'user.password_change', ip: '203.0.113.66', user_agent: 'browser/1' }),
    ]);
  });

  it('are ignored on session-token routes for the log-in throttle too: wrong current passwords count against the connection', async () => {
    const account = await signup(call, ctx().secretKey);
    const change = (endUserIp: string) =>
      call({
        method: 'POST',
        url: '/v1/auth/password/change',
        headers: { ...bearer(account.token), 'x-end-user-ip': endUserIp },
        payload: { current_password: 'wrong-password', new_password: strongPassword('new') },
        remoteAddress: '203.0.113.67',
      });
    for (let failure = 0; failure < 10; failure += 1)
      expectError(await change(`198.51.100.${failure + 1}`), 401, 'invalid_credentials', 'current_password');
    expectError(await change('198.51.100.200'), 429, 'rate_limited');
  });
});

describeEachDialect('sign-up rate limit per end user', (dialect) => {
  const ctx = useTestService(dialect, { env: { RATE_LIMIT_IP_PER_SECOND: '1000' } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);

  // Regression: sign-up is a server-to-server call, so its limit (20 at once per
  // client address) was one limit for every user of the calling application.
  it('counts sign-ups per end-user address, not per calling application', async () => {
    const attempt = (endUserIp: string) =>
      call({
        method: 'POST',
        url: '/v1/auth/signup',
        headers: { ...ctx().auth, 'x-end-user-ip': endUserIp },
        payload: { email: uniqueEmail('burst'), password: strongPassword() },
        remoteAddress: APP_SERVER,
      });
    let accepted = 0;
    let refused: LightMyRequestResponse | undefined;
    while (refused === undefined && accepted < 100) {
      const response = await attempt('198.51.100.60');
      if (response.statusCode === 201) accepted += 1;
      else refused = response;
    }
    expectError(refused!, 429, 'rate_limited');
    expect((await attempt('198.51.100.61')).statusCode).toBe(201);
  });
});
