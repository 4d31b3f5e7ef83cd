import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { signup } from '../modules/auth/auth.testing.js';
import { describeEachDialect } from '../test/database.js';
import { useTestService } from '../test/service.js';
import { userAgentText } from './end-user.js';
import { checkText } from './input-text.js';

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  const body = response.json<{ error: { code: string; param?: string; request_id: string } }>();
  expect({ status: response.statusCode, code: body.error.code, param: body.error.param }).toEqual({ status, code, param });
  expect(body.error.request_id).toBe(response.headers['request-id']);
}

const NUL = '\u0000';
const LONE_HIGH = '\uD800';
const LONE_LOW = '\uDC00';

describe('checkText', () => {
  it('accepts well-formed text, paired surrogates included', () => {
    expect(() => checkText({ a: ['plain', 'emoji 😀 \uD83D\uDE00'], b: { c: 'ü' }, n: 1, t: true, z: null }, '')).not.toThrow();
  });

  it('names the field of a NUL or a lone surrogate by its path', () => {
    const paramOf = (value: unknown): string | undefined => {
      try {
        checkText(value, '');
      } catch (error) {
        return (error as { param?: string }).param;
      }
      return 'accepted';
    };
    expect(paramOf({ name: `a${NUL}b` })).toBe('name');
    expect(paramOf({ metadata: { note: `x${LONE_HIGH}` } })).toBe('metadata.note');
    expect(paramOf({ metadata: { note: `${LONE_LOW}x` } })).toBe('metadata.note');
    expect(paramOf({ metadata: { note: `${LONE_LOW}${LONE_HIGH}` } })).toBe('metadata.note');
    expect(paramOf({ operations: [{ description: 'ok' }, { description: NUL }] })).toBe('operations[1].description');
    expect(paramOf({ metadata: { [`a${NUL}b`]: 'x' } })).toBe('metadata.a\\u0000b');
    expect(paramOf(`body${NUL}`)).toBeUndefined();
  });

  it('walks a body nested deeper than the call stack without overflowing', () => {
    let deep: unknown = `x${NUL}`;
    for (let depth = 0; depth < 200_000; depth += 1) deep = [deep];
    expect(() => checkText(deep, '')).toThrow(/NUL/);
  });
});

describe('userAgentText', () => {
  it('reads the bytes as UTF-8, keeps bytes that are not UTF-8 as latin1, and never cuts inside a character', () => {
    expect(userAgentText(Buffer.from('Mozilla/5.0 (Ünïcode)').toString('latin1'))).toBe('Mozilla/5.0 (Ünïcode)');
    expect(userAgentText('Mozilla/5.0 (Caf\u00e9)')).toBe('Mozilla/5.0 (Café)');
    expect(userAgentText('Already decoded 日本')).toBe('Already decoded 日本');
    expect(userAgentText(`${'A'.repeat(499)}😀`)).toBe('A'.repeat(499));
    expect(userAgentText(`${'A'.repeat(498)}😀`)).toBe(`${'A'.repeat(498)}😀`);
    expect(userAgentText('B'.repeat(600))).toBe('B'.repeat(500));
  });
});

describeEachDialect('edges of input', (dialect) => {
  const ctx = useTestService(dialect);
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const send = (method: 'POST' | 'PATCH', url: string, payload: string | object) =>
    call({
      method,
      url,
      headers: { ...ctx().auth, 'content-type': 'application/json' },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  async function newWallet(): Promise<{ id: string; userId: string }> {
    const account = await signup(call, ctx().secretKey);
    const response = await send('POST', '/v1/wallets', { user_id: account.userId, currency: 'USD' });
    expect(response.statusCode).toBe(201);
    return { id: response.json<{ id: string }>().id, userId: account.userId };
  }

  // Regression: PostgreSQL cannot store NUL, so such a name was a 500 there.
  it('refuses a NUL in a user name or wallet metadata with 400 parameter_invalid naming the field', async () => {
    const wallet = await newWallet();
    expectError(await send('PATCH', `/v1/users/${wallet.userId}`, { name: `Ada${NUL}Lovelace` }), 400, 'parameter_invalid', 'name');
    expectError(
      await send('PATCH', `/v1/users/${wallet.userId}`, { metadata: { note: `a${NUL}` } }),
      400,
      'parameter_invalid',
      'metadata.note',
    );
    expectError(
      await send('PATCH', `/v1/wallets/${wallet.id}`, { metadata: { note: `a${NUL}` } }),
      400,
      'parameter_invalid',
      'metadata.note',
    );
    expectError(
      await send('POST', `/v1/wallets/${wallet.id}/credits`, { amount: 5, description: `top${NUL}up`, idempotency_key: 'nul-1' }),
      400,
      'parameter_invalid',
      'description',
    );
    expectError(
      await send('POST', '/v1/auth/signup', { email: 'nul@example.com', password: `Tq7!vexo-plumb${NUL}x`, name: 'N' }),
      400,
      'parameter_invalid',
      'password',
    );
    // Nothing was stored: the user keeps its name, and the wallet its balance.
    const user = await call({ method: 'GET', url: `/v1/users/${wallet.userId}`, headers: ctx().auth });
    expect(user.json().name).toBe('Test User');
  });

  it('refuses lone surrogates the same way, as escapes in the JSON text', async () => {
    const wallet = await newWallet();
    // JSON.stringify would write a lone surrogate as the escape `\ud800` too; spelled out here.
    expectError(await send('PATCH', `/v1/users/${wallet.userId}`, '{"name": "Ada \\ud800"}'), 400, 'parameter_invalid', 'name');
    expectError(
      await send('PATCH', `/v1/wallets/${wallet.id}`, '{"metadata": {"note": "\\udc00x"}}'),
      400,
      'parameter_invalid',
      'metadata.note',
    );
    expectError(
      await send('PATCH', `/v1/wallets/${wallet.id}`, '{"metadata": {"k\\u0000": "x"}}'),
      400,
      'parameter_invalid',
      'metadata.k\\u0000',
    );
    // A pair is one character, and welcome.
    const paired = await send('PATCH', `/v1/users/${wallet.userId}`, '{"name": "Ada \\ud83d\\ude00"}');
    expect(paired.statusCode).toBe(200);
    expect(paired.json().name).toBe('Ada 😀');
  });

  it('refuses NUL in query strings and path parameters, and a path that is not UTF-8', async () => {
    const wallet = await newWallet();
    const get = (url: string) => call({ method: 'GET', url, headers: ctx().auth });
    expectError(await get('/v1/wallets?starting_after=wlt_%00'), 400, 'parameter_invalid', 'starting_after');
    expectError(await get(`/v1/wallets?user_id=${wallet.userId}%00`), 400, 'parameter_invalid', 'user_id');
    expectError(await get('/v1/wallets/wlt_%00'), 400, 'parameter_invalid', 'id');
    expectError(await get('/v1/users/usr_%00/sessions'), 400, 'parameter_invalid', 'id');
    // %ED%A0%80 would decode to a lone surrogate: the router refuses the path.
    expectError(await get('/v1/wallets/wlt_%ED%A0%80'), 400, 'url_invalid');
    // So does a path parameter longer than the router takes (it answered 414 outside the catalog).
    expectError(await get(`/v1/wallets/wlt_${'x'.repeat(200)}`), 414, 'url_too_long');
    // In a query string the router keeps an undecodable escape as its literal text, which is storable.
    expect((await get('/v1/wallets?starting_after=%ED%A0%80')).statusCode).toBeLessThan(500);
  });

  // Regression: Fastify's prototype-poisoning check called valid JSON invalid.
  it('refuses __proto__, constructor and prototype keys as unknown parameters, nested ones too', async () => {
    const wallet = await newWallet();
    const create = (json: string) => send('POST', '/v1/wallets', json);
    expectError(
      await create(`{"user_id": "${wallet.userId}", "currency": "USD", "__proto__": {"x": 1}}`),
      400,
      'parameter_unknown',
      '__proto__',
    );
    expectError(
      await create(`{"user_id": "${wallet.userId}", "currency": "USD", "constructor": {"prototype": {}}}`),
      400,
      'parameter_unknown',
      'constructor',
    );
    expectError(
      await create(`{"user_id": "${wallet.userId}", "currency": "USD", "metadata": {"__proto__": "x"}}`),
      400,
      'parameter_unknown',
      'metadata.__proto__',
    );
    expectError(
      await send('PATCH', `/v1/wallets/${wallet.id}`, '{"metadata": {"constructor": "x"}}'),
      400,
      'parameter_unknown',
      'metadata.constructor',
    );
    expectError(
      await send('PATCH', `/v1/users/${wallet.userId}`, '{"metadata": {"prototype": "x"}}'),
      400,
      'parameter_unknown',
      'metadata.prototype',
    );
    // Malformed JSON is still what it was.
    expectError(await create('{"user_id": '), 400, 'body_invalid_json');
  });
});

describeEachDialect('hidden characters in an email address', (dialect) => {
  const ctx = useTestService(dialect);
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const post = (url: string, payload: object) => call({ method: 'POST', url, headers: ctx().auth, payload });

  /** Controls, zero-width and other invisible characters, and bidirectional marks, overrides and isolates. */
  const HIDDEN = {
    'U+0007 bell': '\u0007',
    'U+007F delete': '\u007F',
    'U+0085 next line': '\u0085',
    'U+00AD soft hyphen': '\u00AD',
    'U+200B zero-width space': '\u200B',
    'U+200C zero-width non-joiner': '\u200C',
    'U+200D zero-width joiner': '\u200D',
    'U+200E left-to-right mark': '\u200E',
    'U+200F right-to-left mark': '\u200F',
    'U+202A left-to-right embedding': '\u202A',
    'U+202E right-to-left override': '\u202E',
    'U+2060 word joiner': '\u2060',
    'U+2066 left-to-right isolate': '\u2066',
    'U+2069 pop directional isolate': '\u2069',
    'U+FEFF zero-width no-break space': '\uFEFF',
  };

  // Regression: "admin\u200B@example.com" signed up as a second, look-alike account of admin@example.com.
  it.each(Object.entries(HIDDEN))('refuses %s with 400 parameter_invalid naming email, on sign-up and log in', async (_name, character) => {
    const email = `ad${character}min@example.com`;
    expectError(await post('/v1/auth/signup', { email, password: 'Tq7!vexo-plumb-hidden' }), 400, 'parameter_invalid', 'email');
    expectError(await post('/v1/auth/login', { email, password: 'Tq7!vexo-plumb-hidden' }), 400, 'parameter_invalid', 'email');
  });

  it('refuses it wherever an address is taken: reset, email codes, invitations, the users filter', async () => {
    const email = 'owner\u202E@example.com';
    expectError(await post('/v1/auth/password/forgot', { email }), 400, 'parameter_invalid', 'email');
    expectError(await post('/v1/auth/email-code', { email }), 400, 'parameter_invalid', 'email');
    const organization = await post('/v1/organizations', { name: 'Hidden characters' });
    expect(organization.statusCode).toBe(201);
    const invitations = `/v1/organizations/${organization.json<{ id: string }>().id}/invitations`;
    expectError(await post(invitations, { email }), 400, 'parameter_invalid', 'email');
    const list = await call({ method: 'GET', url: `/v1/users?email=${encodeURIComponent(email)}`, headers: ctx().auth });
    expectError(list, 400, 'parameter_invalid', 'email');
    // Nothing was made of it, and the same address without the character is fine.
    expect((await post(invitations, { email: 'owner@example.com' })).statusCode).toBe(201);
    expect((await signup(call, ctx().secretKey, { email: ' Plain.Address@Example.COM ' })).body.user.email).toBe(
      'Plain.Address@example.com',
    );
  });
});

describeEachDialect('Authorization and X-API-Key together', (dialect) => {
  const ctx = useTestService(dialect);
  const call = (options: InjectOptions) => ctx().service.app.inject(options);

  it('answer 400 credential_conflict when they differ, and are fine when they carry the same key', async () => {
    const other = await ctx().service.projects.createKey(ctx().projectId);
    const project = (headers: Record<string, string>) => call({ method: 'GET', url: '/v1/project', headers });
    const conflict = await project({ authorization: `Bearer ${ctx().secretKey}`, 'x-api-key': other.secretKey });
    expectError(conflict, 400, 'credential_conflict');
    expect(conflict.json().error.type).toBe('invalid_request_error');
    expect((await project({ authorization: `Bearer ${ctx().secretKey}`, 'x-api-key': ctx().secretKey })).statusCode).toBe(200);
    expect((await project({ authorization: `Bearer ${other.secretKey}` })).statusCode).toBe(200);
    // A session token and a secret key are two credentials as well, on any kind of route.
    const account = await signup(call, ctx().secretKey);
    const me = await call({
      method: 'GET',
      url: '/v1/users/me',
      headers: { authorization: `Bearer ${account.token}`, 'x-api-key': ctx().secretKey },
    });
    expectError(me, 400, 'credential_conflict');
  });
});
