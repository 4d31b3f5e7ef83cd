// Session JWTs (docs/adr/0020-session-jwts.md): verifying offline against a round trip. Runs after the
// sessions scenario (`npm run bench -- sessions`), or alone (`npm run bench -- session-jwt`).
// - The SDK's verifySessionJwt (packages/sdk, built) in this process, on one core: the JWTs of
//   1,000 distinct sessions (a sign-up, then 999 refreshes, each a new session) verified in turn,
//   with and without the verified-token cache, for each algorithm (ES256, RS256, EdDSA), in a loop
//   bounded in count and time. Every request the verifier makes goes through a counting fetch, and
//   the service's own count of JWKS requests is read from /metrics: once the key set is cached,
//   no verification may reach the service.
// - `POST /v1/sessions/validate` round trips per second against a loopback `svc serve` (autocannon,
//   the runner's connections and duration) on SQLite and PostgreSQL. Target: verification (with the
//   cache and without it) at least 2 × validation on the same dialect.
// - Better Auth 1.7.7 get-session (Bearer), when BENCH_BETTER_AUTH_DIR names an installed copy of
//   the peer. Target: verification at least 30 × get-session.
// - Signing's share of a log in: log in's main-thread CPU per request (autocannon against the
//   service, SQLite, ES256) against the time of the service's own signing call (SessionJwts.mint
//   from the built server, its key read replaced by the key in hand) timed in this process.
//   Target: signing at most 10 % of the rest of log in's main-thread time.
// Knobs besides the runner's: BENCH_SESSIONS_DIALECTS (default "sqlite,postgres"),
// BENCH_JWT_VERIFY_SECONDS (default 1: each verification loop's time bound), BENCH_BETTER_AUTH_DIR.
import { Buffer } from 'node:buffer';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { requestJson } from '../lib/api.js';
import { measureBetterAuth } from '../lib/floors.js';
import { measure } from '../lib/load.js';
import { createBenchDatabase, probePostgres } from '../lib/postgres.js';
import { freePort, LOOPBACK } from '../lib/processes.js';
import { createProject, prepareDatabase, startService } from '../lib/service.js';

const ALGORITHMS = ['ES256', 'RS256', 'EdDSA'];
const SESSIONS = 1000;
/** Each verification loop stops at this many verifications or at its time bound, whichever comes first. */
const VERIFICATIONS_MAX = 2_000_000;
const SIGNINGS = 2000;
const VALIDATE_TARGET_RATIO = 2;
const PEER_TARGET_RATIO = 30;
const SIGNING_SHARE_TARGET = 0.1;
const PASSWORD = 'a long bench passphrase 7f3a';

export const scenario = {
  name: 'session-jwt',
  partOf: 'sessions',
  description: 'SDK session JWT verification per second vs POST /v1/sessions/validate and Better Auth get-session; signing vs log in',

  async run(ctx) {
    const dialects = (process.env.BENCH_SESSIONS_DIALECTS ?? 'sqlite,postgres')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
    const verifySeconds = Number(process.env.BENCH_JWT_VERIFY_SECONDS ?? '1');
    const sdk = await import(pathToFileURL(join(ctx.root, 'packages/sdk/dist/esm/session-jwt/index.js')).href);
    const logLevel = ctx.options.logLevels[0] ?? 'warn';
    /** Verifications per second by algorithm and cache, measured on the first dialect (the loop never touches the database). */
    let verification;

    for (const dialect of dialects) {
      if (dialect === 'postgres') {
        const unreachable = await probePostgres(ctx.options.postgresAdminUrl);
        if (unreachable !== undefined) {
          ctx.note(`session-jwt [postgres]: skipped, PostgreSQL not reachable (${unreachable})`);
          continue;
        }
      }
      const database = await prepareDatabase(ctx, dialect);
      try {
        const measuredHere = {};
        // The algorithms' loops need a key of each: one project and one service per algorithm,
        // on the first dialect only; later dialects measure validation with ES256.
        const algorithms = verification === undefined ? ALGORITHMS : ['ES256'];
        let validate;
        for (const alg of algorithms) {
          const { secretKey, projectId } = createProject(ctx, database, `bench-${alg}`);
          const port = await freePort();
          const origin = `http://${LOOPBACK}:${port}`;
          const service = await startService(ctx, database, {
            logLevel,
            port,
            extraEnv: { PUBLIC_URL: origin, SESSION_JWT_ALG: alg },
          });
          try {
            const headers = { authorization: `Bearer ${secretKey}`, 'content-type': 'application/json' };
            const email = `bench-jwt-${alg.toLowerCase()}@example.com`;
            const { tokens, sessionToken } = await sessionJwts(origin, headers, email);
            if (verification === undefined) {
              measuredHere[alg] = await measureVerification(ctx, sdk, { origin, projectId, tokens, alg, verifySeconds });
            }
            if (alg === 'ES256') {
              validate = await measure({
                url: `${origin}/v1/sessions/validate`,
                headers,
                request: { method: 'POST', body: JSON.stringify({ session_id: sessionToken }) },
                options: ctx.options,
                serverPid: service.pid,
              });
              ctx.record({ bench: 'session_validate_round_trips', dialect, log_level: logLevel, ...validate });
              if (dialect === 'sqlite') await recordSigningShare(ctx, { origin, headers, email, service, logLevel });
            }
          } finally {
            await service.stop();
          }
        }
        verification ??= measuredHere;
        for (const alg of ALGORITHMS) {
          const measured = verification[alg];
          if (measured === undefined) continue;
          const withoutCache = ratio(measured.uncached_per_s, validate.req_per_s);
          ctx.record({
            bench: 'session_jwt_verify_vs_validate',
            dialect,
            log_level: null,
            alg,
            verify_cached_per_s: measured.cached_per_s,
            verify_uncached_per_s: measured.uncached_per_s,
            validate_req_per_s: validate.req_per_s,
            ratio_cached: ratio(measured.cached_per_s, validate.req_per_s),
            ratio_uncached: withoutCache,
            target_ratio: VALIDATE_TARGET_RATIO,
            summary:
              `${alg}: verify ${measured.cached_per_s}/s cached (${ratio(measured.cached_per_s, validate.req_per_s)} ×), ` +
              `${measured.uncached_per_s}/s uncached (${withoutCache} ×) against validate ${validate.req_per_s} req/s (target >= ${VALIDATE_TARGET_RATIO} ×)`,
            valid: validate.valid && measured.valid,
            verdict: validate.valid && measured.valid && withoutCache >= VALIDATE_TARGET_RATIO ? 'PASS' : 'FAIL',
          });
        }
        await recordPeer(ctx, dialect, verification);
      } finally {
        await database.drop();
      }
    }
  },
};

/**
 * The JWTs of `SESSIONS` distinct sessions: a sign-up's, then each refresh's (a refresh ends its
 * session and makes a new one; the ended session's JWT still verifies until its exp, which is the
 * point of verifying offline). Also answers the last session's token, for validation.
 */
async function sessionJwts(origin, headers, email) {
  const signedUp = await requestJson({
    method: 'POST',
    url: `${origin}/v1/auth/signup`,
    headers,
    body: { email, password: PASSWORD },
    expect: 201,
  });
  const tokens = [signedUp.session.jwt];
  let refreshToken = signedUp.session.refresh_token;
  let sessionToken = signedUp.session.id;
  while (tokens.length < SESSIONS) {
    const refreshed = await requestJson({
      method: 'POST',
      url: `${origin}/v1/sessions/refresh`,
      headers,
      body: { refresh_token: refreshToken },
      expect: 200,
    });
    tokens.push(refreshed.session.jwt);
    refreshToken = refreshed.session.refresh_token;
    sessionToken = refreshed.session.id;
  }
  if (new Set(tokens.map((jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).sid)).size !== SESSIONS)
    throw new Error(`expected ${SESSIONS} distinct sessions`);
  return { tokens, sessionToken };
}

/**
 * Verifications per second in this process over the tokens in turn, with the verified-token cache
 * (its size covers every token, so after the first pass each is a cache hit) and without it (every
 * verification checks the signature). The key set is fetched before the clock starts; requests
 * during the loops are counted by the verifier's fetch and by the service's JWKS counter.
 */
async function measureVerification(ctx, sdk, { origin, projectId, tokens, alg, verifySeconds }) {
  const result = { alg, valid: true };
  for (const cached of [true, false]) {
    let fetches = 0;
    const verifier = sdk.createSessionJwtVerifier({
      baseUrl: origin,
      projectId,
      verifiedTokenCacheSize: cached ? SESSIONS * 2 : 0,
      fetch: (input, init) => {
        fetches += 1;
        return globalThis.fetch(input, init);
      },
    });
    await verifier.verify(tokens[0]);
    const fetchesBefore = fetches;
    const jwksServedBefore = await jwksRequestsServed(origin);
    // Warm up: one pass over every token (this also fills the cache).
    for (const jwt of tokens) await verifier.verify(jwt);
    let count = 0;
    const started = process.hrtime.bigint();
    const deadline = started + BigInt(Math.round(verifySeconds * 1e9));
    while (count < VERIFICATIONS_MAX) {
      // A check of the clock every 100 verifications: cheap against a verification.
      for (let index = 0; index < 100; index += 1) {
        const claims = await verifier.verify(tokens[(count + index) % SESSIONS]);
        if (claims.aud !== projectId) throw new Error('a verification answered another audience');
      }
      count += 100;
      if (process.hrtime.bigint() >= deadline) break;
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const fetchesDuring = fetches - fetchesBefore;
    const servedDuring = (await jwksRequestsServed(origin)) - jwksServedBefore;
    const perSecond = Math.round(count / seconds);
    ctx.record({
      bench: `session_jwt_verify_${cached ? 'cached' : 'uncached'}`,
      dialect: null,
      log_level: null,
      alg,
      verifications: count,
      seconds: Number(seconds.toFixed(3)),
      verifications_per_s: perSecond,
      us_per_verification: Number(((seconds * 1e6) / count).toFixed(2)),
      jwks_fetches_during: fetchesDuring,
      jwks_requests_served_during: servedDuring,
      summary:
        `${alg}: ${perSecond.toLocaleString('en-US')} verifications/s (${((seconds * 1e6) / count).toFixed(1)} us each, ${count} in ${seconds.toFixed(2)} s); ` +
        `JWKS requests during the loop: ${fetchesDuring} sent, ${servedDuring} served`,
      valid: fetchesDuring === 0 && servedDuring === 0,
      verdict: fetchesDuring === 0 && servedDuring === 0 ? 'PASS' : 'FAIL',
    });
    result[cached ? 'cached_per_s' : 'uncached_per_s'] = perSecond;
    result.valid &&= fetchesDuring === 0 && servedDuring === 0;
  }
  return result;
}

/** How many JWKS requests the service has answered, from its Prometheus counter. */
async function jwksRequestsServed(origin) {
  const text = await (await globalThis.fetch(`${origin}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.includes('jwks.json')) continue;
    if (!/^http_requests_total\{/.test(line)) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/**
 * Signing's share of log in's main-thread time. Log in's main-thread CPU per request comes from
 * autocannon against the service (each log in names another end-user address, as in the sessions
 * scenario); the signing call is the service's own (`SessionJwts.mint` from the built server) with
 * its key read answered from memory, timed here over `SIGNINGS` calls, for each algorithm.
 */
async function recordSigningShare(ctx, { origin, headers, email, service, logLevel }) {
  const login = await measure({
    url: `${origin}/v1/auth/login`,
    headers,
    request: loginRequests(email),
    options: ctx.options,
    serverPid: service.pid,
  });
  const { SessionJwts } = await import(pathToFileURL(join(ctx.root, 'packages/server/dist/modules/sessions/session-jwts.js')).href);
  for (const alg of ALGORITHMS) {
    const pair =
      alg === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : alg === 'RS256'
          ? generateKeyPairSync('rsa', { modulusLength: 2048 })
          : generateKeyPairSync('ed25519');
    const privateKey = createPrivateKey(pair.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const key = { kid: 'sjk_bench', alg, privateKey };
    const jwts = new SessionJwts({ keys: { signingKey: async () => key }, publicUrl: origin, ttlSeconds: 300 });
    const input = {
      projectId: 'prj_bench',
      sessionName: 'svc_ses_bench',
      sessionExpiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      user: { id: 'usr_bench', email, emailVerified: false, roles: [] },
      amr: ['pwd'],
    };
    for (let index = 0; index < 200; index += 1) await jwts.mint(undefined, input, new Date());
    const started = process.hrtime.bigint();
    for (let index = 0; index < SIGNINGS; index += 1) await jwts.mint(undefined, input, new Date());
    const signUs = Number(process.hrtime.bigint() - started) / 1e3 / SIGNINGS;
    const loginUs = login.server_main_thread_cpu_us_per_req;
    // The service signed with ES256 during the log ins: its signing is inside loginUs. For the
    // other algorithms the share is against the same log in with ES256's signing taken out.
    const share = loginUs > 0 ? signUs / Math.max(1, loginUs - signUs) : null;
    ctx.record({
      bench: 'session_jwt_signing_vs_login',
      dialect: 'sqlite',
      log_level: logLevel,
      alg,
      login_req_per_s: login.req_per_s,
      login_main_thread_cpu_us_per_req: loginUs,
      sign_us: Number(signUs.toFixed(1)),
      signing_share: share === null ? null : Number(share.toFixed(4)),
      target_share: SIGNING_SHARE_TARGET,
      summary:
        `${alg}: signing ${signUs.toFixed(1)} us against log in's ${loginUs ?? '?'} us of main-thread CPU per request ` +
        `(${login.req_per_s} log ins/s) = ${share === null ? '?' : (share * 100).toFixed(1)} % (target <= ${SIGNING_SHARE_TARGET * 100} %)`,
      valid: login.valid && share !== null,
      verdict: login.valid && share !== null && share <= SIGNING_SHARE_TARGET ? 'PASS' : 'FAIL',
    });
  }
}

/** Log ins of one user, each from another end-user address, so the per-address throttle stays out of the way. */
function loginRequests(email) {
  const body = JSON.stringify({ email, password: PASSWORD });
  let counter = 0;
  return {
    method: 'POST',
    body,
    requests: [
      {
        setupRequest(request) {
          counter += 1;
          const ip = `198.51.${Math.floor(counter / 250) % 250}.${(counter % 250) + 1}`;
          return { ...request, method: 'POST', body, headers: { ...request.headers, 'x-end-user-ip': ip } };
        },
      },
    ],
  };
}

/** Better Auth's get-session on the same dialect against verification, or a note that the peer was skipped. */
async function recordPeer(ctx, dialect, verification) {
  const database = dialect === 'postgres' ? await createBenchDatabase(ctx.options.postgresAdminUrl) : undefined;
  try {
    const peer = await measureBetterAuth(ctx, { dialect, databaseUrl: database?.url });
    if (peer.skipped !== undefined) {
      ctx.note(`session-jwt [${dialect}]: Better Auth peer skipped (${peer.skipped})`);
      return;
    }
    for (const alg of ALGORITHMS) {
      const measured = verification[alg];
      if (measured === undefined) continue;
      const withoutCache = ratio(measured.uncached_per_s, peer.measured.req_per_s);
      ctx.record({
        bench: 'session_jwt_verify_vs_better_auth',
        dialect,
        log_level: null,
        alg,
        better_auth_req_per_s: peer.measured.req_per_s,
        better_auth_p50_ms: peer.measured.p50_ms,
        verify_cached_per_s: measured.cached_per_s,
        verify_uncached_per_s: measured.uncached_per_s,
        ratio_cached: ratio(measured.cached_per_s, peer.measured.req_per_s),
        ratio_uncached: withoutCache,
        target_ratio: PEER_TARGET_RATIO,
        summary:
          `${alg}: verify ${measured.cached_per_s}/s cached (${ratio(measured.cached_per_s, peer.measured.req_per_s)} ×), ` +
          `${measured.uncached_per_s}/s uncached (${withoutCache} ×) against Better Auth get-session ${peer.measured.req_per_s} req/s (target >= ${PEER_TARGET_RATIO} ×)`,
        valid: peer.measured.valid,
        verdict: peer.measured.valid && withoutCache >= PEER_TARGET_RATIO ? 'PASS' : 'FAIL',
      });
    }
  } finally {
    await database?.drop();
  }
}

function ratio(value, base) {
  return base > 0 ? Number((value / base).toFixed(4)) : 0;
}
