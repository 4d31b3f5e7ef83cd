import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { useTestService } from '../../test/service.js';

describeEachDialect('API keys over HTTP', (dialect) => {
  const test = useTestService(dialect);

  it('creates a key shown once, lists keys by prefix and last four, and revokes one', async () => {
    const { app } = test().service;
    const created = await app.inject({ method: 'POST', url: '/v1/api-keys', headers: test().auth, payload: { name: 'ci' } });
    expect(created.statusCode).toBe(201);
    const key = created.json<{ id: string; secret_key: string; prefix: string; last4: string; name: string }>();
    expect(key.id).toMatch(/^key_/);
    expect(key.secret_key).toMatch(/^svc_sk_/);
    expect(key.prefix).toBe(key.secret_key.slice(0, 11));
    expect(key.last4).toBe(key.secret_key.slice(-4));
    expect(key.name).toBe('ci');

    // The new key works at once.
    expect(
      (await app.inject({ method: 'GET', url: '/v1/project', headers: { authorization: `Bearer ${key.secret_key}` } })).statusCode,
    ).toBe(200);

    const list = await app.inject({ method: 'GET', url: '/v1/api-keys', headers: test().auth });
    expect(list.statusCode).toBe(200);
    const body = list.json<{ object: string; data: Record<string, unknown>[]; has_more: boolean }>();
    expect(body.object).toBe('list');
    expect(body.data.map((row) => row['id'])).toContain(key.id);
    expect(JSON.stringify(body)).not.toContain(key.secret_key);
    expect(body.data.every((row) => !('secret_key' in row) && !('key_hash' in row))).toBe(true);

    const revoked = await app.inject({ method: 'POST', url: `/v1/api-keys/${key.id}/revoke`, headers: test().auth });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revoked_at).not.toBeNull();
    const refused = await app.inject({ method: 'GET', url: '/v1/project', headers: { authorization: `Bearer ${key.secret_key}` } });
    expect(refused.statusCode).toBe(401);
    // Revoking again changes nothing.
    expect((await app.inject({ method: 'POST', url: `/v1/api-keys/${key.id}/revoke`, headers: test().auth })).statusCode).toBe(200);
  });

  it('pages newest first with starting_after', async () => {
    const { app } = test().service;
    for (let index = 0; index < 3; index += 1)
      await app.inject({ method: 'POST', url: '/v1/api-keys', headers: test().auth, payload: { name: `k${index}` } });
    const first = await app.inject({ method: 'GET', url: '/v1/api-keys?limit=2', headers: test().auth });
    const page1 = first.json<{ data: { id: string; created_at: string }[]; has_more: boolean }>();
    expect(page1.data).toHaveLength(2);
    expect(page1.has_more).toBe(true);
    const second = await app.inject({
      method: 'GET',
      url: `/v1/api-keys?limit=2&starting_after=${page1.data[1]!.id}`,
      headers: test().auth,
    });
    const page2 = second.json<{ data: { id: string; created_at: string }[] }>();
    expect(page2.data.length).toBeGreaterThan(0);
    expect(page2.data.map((row) => row.id)).not.toContain(page1.data[0]!.id);
    expect(page2.data[0]!.created_at <= page1.data[1]!.created_at).toBe(true);
  });

  it('answers 404 for a key of another project, or none', async () => {
    const other = await test().service.projects.createProject({ name: 'Other' });
    const [otherKey] = await test().service.projects.listKeys(other.project.id);
    const response = await test().service.app.inject({ method: 'POST', url: `/v1/api-keys/${otherKey!.id}/revoke`, headers: test().auth });
    expect(response.statusCode).toBe(404);
    expect((await test().service.projects.listKeys(other.project.id))[0]!.revoked_at).toBeNull();
    expect(
      (await test().service.app.inject({ method: 'POST', url: '/v1/api-keys/key_nope/revoke', headers: test().auth })).statusCode,
    ).toBe(404);
  });

  it('refuses to revoke the key making the request (409 api_key_in_use)', async () => {
    const [own] = await test().service.projects.listKeys(test().projectId);
    const keys = await test().service.projects.listKeys(test().projectId);
    const current = keys.find((key) => key.name === 'default') ?? own!;
    const response = await test().service.app.inject({ method: 'POST', url: `/v1/api-keys/${current.id}/revoke`, headers: test().auth });
    expect(response.statusCode).toBe(409);
    expect(response.json().error.code).toBe('api_key_in_use');
  });
});
