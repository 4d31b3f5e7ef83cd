import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestService } from '../test/service.js';
import { idempotencyKeyDescription } from './openapi-headers.js';
import { successDescription } from './openapi-successes.js';
import { API_TITLE, OPENAPI_PATH, routeErrorCodes, serverEntry } from './openapi.js';

// The CLI's package exports nothing but its bin, so the bin is found from its package.json.
const REDOCLY = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

interface Operation {
  readonly operationId?: string;
  readonly summary?: string;
  readonly description?: string;
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly description?: string }>;
  readonly security?: ReadonlyArray<Record<string, readonly string[]>>;
  readonly responses: Readonly<Record<string, { readonly description?: string; readonly $ref?: string; readonly content?: unknown }>>;
}
interface Document {
  readonly servers: ReadonlyArray<{ readonly url: string }>;
  readonly paths: Readonly<Record<string, Readonly<Record<string, Operation>>>>;
  readonly components: { readonly schemas: Readonly<Record<string, unknown>>; readonly responses: Readonly<Record<string, unknown>> };
}
interface LintReport {
  readonly totals: { readonly errors: number; readonly warnings: number; readonly ignored: number };
  readonly problems: ReadonlyArray<{ readonly ruleId: string; readonly message: string; readonly location: unknown }>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const operations = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, operation })),
  );

describe('GET /v1/openapi.json (valid for Redocly: no errors, no warnings)', () => {
  const ctx = useTestService('sqlite');
  const directory = mkdtempSync(join(tmpdir(), 'svc-openapi-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  const fetchDocument = async (): Promise<Document> => {
    const response = await ctx().service.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(response.statusCode).toBe(200);
    return response.json<Document>();
  };

  it("passes Redocly CLI's recommended rules with no error and no warning", async () => {
    const file = join(directory, 'openapi.json');
    writeFileSync(file, JSON.stringify(await fetchDocument()));
    // An explicit configuration, so a redocly.yaml elsewhere can never change the rules checked.
    writeFileSync(join(directory, 'redocly.yaml'), 'extends:\n  - recommended\n');
    // Two routes are where an identity provider sends the browser back, and only ever answer 303 (a
    // redirect to the sign-in's redirect_uri); `operation-2xx-response` asks every operation for a
    // 2XX. Those two locations alone are excused, and the test checks that exactly two problems were.
    writeFileSync(
      join(directory, '.redocly.lint-ignore.yaml'),
      [
        'openapi.json:',
        '  operation-2xx-response:',
        "    - '#/paths/~1v1~1auth~1sso~1oidc~1callback/get/responses'",
        "    - '#/paths/~1v1~1auth~1sso~1saml~1{connection_id}~1acs/post/responses'",
        '',
      ].join('\n'),
    );
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [REDOCLY, 'lint', file, '--config', join(directory, 'redocly.yaml'), '--format', 'json', '--max-problems', '1000'],
      // No telemetry and no update check: the lint runs without the network.
      { cwd: directory, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, encoding: 'utf8' },
    ).catch((error: unknown) => ({ stdout: (error as { stdout?: string }).stdout ?? '' }));
    const report = JSON.parse(stdout) as LintReport;
    expect(report.problems.map((problem) => `${problem.ruleId}: ${problem.message} ${JSON.stringify(problem.location)}`)).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 2 });
  }, 60_000);

  it('names every operation once, and describes its security and its errors with the one ErrorResponse schema', async () => {
    const document = await fetchDocument();
    const all = operations(document);
    expect(all.length).toBeGreaterThan(90);
    const ids = all.map(({ operation }) => operation.operationId);
    expect(ids.filter((id) => id === undefined || !/^[a-z][A-Za-z]+$/.test(id))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.servers.length).toBeGreaterThan(0);
    expect(document.components.schemas).toHaveProperty('ErrorResponse');
    for (const { key, operation } of all) {
      expect(operation.security, key).toBeDefined();
      expect(Object.keys(operation.responses), key).toEqual(expect.arrayContaining(['4XX', '500', '503']));
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!/^4\d\d$/.test(status) || status === '429') continue;
        expect(response.content, `${key} ${status}`).toEqual({
          'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } },
        });
      }
    }
  });

  it('describes every operation, and every success response as what it is', async () => {
    const all = operations(await fetchDocument());
    expect(all.filter(({ operation }) => (operation.description ?? '').trim() === '').map(({ key }) => key)).toEqual([]);
    expect(all.filter(({ operation }) => operation.description === operation.summary).map(({ key }) => key)).toEqual([]);
    const undescribed = all.flatMap(({ key, operation }) =>
      Object.entries(operation.responses)
        .filter(([status]) => status.startsWith('2'))
        .filter(([, response]) => (response.description ?? '').trim() === '' || response.description === 'Default Response')
        .map(([status]) => `${key} ${status}`),
    );
    expect(undescribed).toEqual([]);
  });

  it('declares Idempotency-Key on every POST, and the end-user headers wherever a secret key is taken', async () => {
    const all = operations(await fetchDocument());
    const headers = (operation: Operation) => (operation.parameters ?? []).filter((parameter) => parameter.in === 'header');
    const withoutKey = all.filter(
      ({ key, operation }) =>
        key.startsWith('POST ') &&
        !headers(operation).some((header) => header.name === 'Idempotency-Key' && header.description !== undefined),
    );
    expect(withoutKey.map(({ key }) => key)).toEqual([]);
    const takesSecretKey = ({ operation }: { operation: Operation }) =>
      (operation.security ?? []).some((requirement) => 'secretKey' in requirement);
    for (const entry of all) {
      const names = headers(entry.operation).map((header) => header.name);
      if (takesSecretKey(entry)) expect(names, entry.key).toEqual(expect.arrayContaining(['X-End-User-IP', 'X-End-User-Agent']));
      else expect(names, entry.key).not.toContain('X-End-User-IP');
    }
    const paths = (await fetchDocument()).paths;
    const keyOf = (path: string) =>
      paths[path]?.['post']?.parameters?.find((parameter) => parameter.name === 'Idempotency-Key')?.description;
    expect(keyOf('/v1/wallets/{id}/credits')).toContain('`idempotency_key`');
    expect(keyOf('/v1/wallets/batch')).toContain('kept forever');
    expect(keyOf('/v1/organizations')).toContain('kept 24 hours');
    expect(keyOf('/v1/sessions/validate')).toMatch(/^Ignored/);
  });

  it('derives security from the credential each route demands: public routes say so with an empty list', async () => {
    const paths = (await fetchDocument()).paths;
    expect(paths['/healthz']?.['get']?.security).toEqual([]);
    expect(paths['/v1/auth/sso/saml/{connection_id}/metadata']?.['get']?.security).toEqual([]);
    expect(paths['/v1/wallets']?.['post']?.security).toEqual([{ secretKey: [] }, { secretKeyHeader: [] }]);
    expect(paths['/v1/users/me']?.['get']?.security).toEqual([{ sessionToken: [] }]);
    expect(paths['/metrics']?.['get']).toMatchObject({ operationId: 'getMetrics', security: [{}, { metricsToken: [] }] });
  });

  it("lists each operation's refusals by status, with their codes", async () => {
    const debit = (await fetchDocument()).paths['/v1/wallets/{id}/debits']?.['post'];
    expect(debit?.operationId).toBe('debitWallet');
    expect(Object.keys(debit?.responses ?? {}).sort()).toEqual([
      '201',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '415',
      '422',
      '429',
      '4XX',
      '500',
      '503',
    ]);
    expect(debit?.responses['409']?.description).toContain('`wallet_frozen`');
    expect(debit?.responses['422']?.description).toContain('`insufficient_credits`');
    expect(debit?.responses['429']).toEqual({ $ref: '#/components/responses/RateLimited' });
  });

  it('keeps /docs, the page that renders the document: titled with the service name, reading the one document URL', async () => {
    const inject = (url: string) => ctx().service.app.inject({ method: 'GET', url });
    const page = await inject('/docs/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain(`<title>${API_TITLE}</title>`);
    expect(((await fetchDocument()) as unknown as { info: { title: string } }).info.title).toBe(API_TITLE);
    const initializer = await inject('/docs/static/swagger-initializer.js');
    expect(initializer.statusCode).toBe(200);
    expect(initializer.body).toContain(`"urls":[{"url":"${OPENAPI_PATH}"`);
    // The plugin's own copies of the document are gone: one URL serves it.
    for (const copy of ['/docs/json', '/docs/yaml']) {
      const response = await inject(copy);
      expect(response.statusCode, copy).toBe(404);
      expect(response.json<{ error: { code: string } }>().error.code).toBe('route_not_found');
    }
  });

  it('still serves /metrics as Prometheus text now that its schema is documented', async () => {
    const metrics = await ctx().service.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.headers['content-type']).toContain('text/plain');
    expect(metrics.body).toContain('# HELP');
  });
});

describe('routeErrorCodes', () => {
  it('derives what the guard, the parsers and the idempotency hooks can refuse', () => {
    const codes = routeErrorCodes({
      method: 'POST',
      credential: 'session',
      rateLimited: true,
      idempotent: false,
      schema: { body: {}, errors: ['invitation_not_pending'] },
    });
    expect(codes).toEqual(expect.arrayContaining(['body_invalid_json', 'session_expired', 'session_token_required', 'body_too_large']));
    expect(codes).toContain('invitation_not_pending');
    expect(codes).not.toContain('idempotency_key_reused');
    expect(codes).not.toContain('resource_missing');
    expect(routeErrorCodes({ method: 'GET', credential: 'public', rateLimited: false, idempotent: true, schema: {} })).toEqual([]);
  });

  it('describes a success response by the object its schema names', () => {
    const json = (schema: unknown) => ({ content: { 'application/json': { schema } } }) as Parameters<typeof successDescription>[1];
    const wallet = { properties: { object: { enum: ['wallet'] } } };
    expect(successDescription('201', json(wallet))).toBe('Created: the new `wallet`.');
    expect(successDescription('200', json({ properties: { object: { enum: ['list'] }, data: { items: wallet } } }))).toContain(
      '`wallet` objects',
    );
    expect(successDescription('200', json({ anyOf: [{ $ref: '#/components/schemas/Transaction' }] }))).toBe('One of: `Transaction`.');
    expect(successDescription('204', {})).toBe('Done; no body.');
  });

  it("says what Idempotency-Key does from the route's idempotency options", () => {
    expect(idempotencyKeyDescription({ claim: 'movement', bodyKey: true }, 'secret')).toContain('kept forever');
    expect(idempotencyKeyDescription({}, 'session')).toContain('per project and user');
    expect(idempotencyKeyDescription({ mode: 'off' }, 'public')).toMatch(/^Ignored/);
  });

  it('uses PUBLIC_URL as the server unless it is a loopback address', () => {
    expect(serverEntry('https://api.example.org').url).toBe('https://api.example.org');
    expect(serverEntry('http://localhost:8080').url).toBe('/');
    expect(serverEntry('http://127.0.0.1:8080').url).toBe('/');
  });
});
