import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/database.js';
import { startDnsServer } from '../../test/dns-server.js';
import { useTestService } from '../../test/service.js';
import { eventsOf } from '../auth/auth.testing.js';

function expectError(response: LightMyRequestResponse, status: number, code: string, param?: string): void {
  const body = response.json<{ error: { code: string; param?: string } }>();
  expect({ status: response.statusCode, code: body.error.code, body: response.body }).toMatchObject({ status, code });
  if (param !== undefined) expect(body.error.param).toBe(param);
}

interface DomainBody {
  object: 'organization_domain';
  organization_id: string;
  domain: string;
  status: 'pending' | 'verified';
  verification: 'dns' | 'manual';
  txt_record: { name: string; value: string };
  created_at: string;
  verified_at: string | null;
}

// A real DNS server on loopback, authoritative for whatever the tests put in its records.
const dns = await startDnsServer();
afterAll(() => dns.close());

describeEachDialect('organization domains', (dialect) => {
  const ctx = useTestService(dialect, { env: { DNS_SERVERS: dns.address } });
  const call = (options: InjectOptions) => ctx().service.app.inject(options);
  const api = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    call({ method, url, headers: ctx().auth, ...(payload === undefined ? {} : { payload }) });
  const organization = async (): Promise<string> => {
    const created = await api('POST', '/v1/organizations', { name: `Domains ${Math.random().toString(36).slice(2)}` });
    expect(created.statusCode, created.body).toBe(201);
    return created.json<{ id: string }>().id;
  };
  const addDomain = async (organizationId: string, domain: string, verification: 'dns' | 'manual'): Promise<DomainBody> => {
    const added = await api('POST', `/v1/organizations/${organizationId}/domains`, { domain, verification });
    expect(added.statusCode, added.body).toBe(201);
    return added.json<DomainBody>();
  };
  const verify = (organizationId: string, domain: string) => api('POST', `/v1/organizations/${organizationId}/domains/${domain}/verify`);
  const auditOf = async (organizationId: string) =>
    (
      await ctx()
        .service.db.kysely.selectFrom('audit_log')
        .select(['action', 'outcome'])
        .where('resource_id', '=', organizationId)
        .where('action', 'like', 'organization_domain.%')
        .execute()
    )
      .map((row) => `${row.action}:${row.outcome}`)
      .sort();

  describe('dns verification against a DNS server', () => {
    it('stays pending without the record or with another value, and is verified by the right one', async () => {
      const organizationId = await organization();
      const added = await addDomain(organizationId, 'Acme-Corp.Example.', 'dns');
      expect(added).toEqual({
        object: 'organization_domain',
        organization_id: organizationId,
        domain: 'acme-corp.example',
        status: 'pending',
        verification: 'dns',
        txt_record: { name: '_svc-verification.acme-corp.example', value: expect.stringMatching(/^svc-verification=[\w-]{32}$/) },
        created_at: expect.any(String),
        verified_at: null,
      });
      const name = added.txt_record.name;

      // No such name at all (NXDOMAIN), then the name without a TXT record.
      expectError(await verify(organizationId, 'acme-corp.example'), 422, 'domain_unverified', 'domain');
      dns.records.set(name, []);
      expectError(await verify(organizationId, 'acme-corp.example'), 422, 'domain_unverified', 'domain');
      // Other values, among them another organization's value for the same domain.
      dns.records.set(name, ['v=spf1 -all', `${added.txt_record.value}x`, 'svc-verification=someone-else']);
      expectError(await verify(organizationId, 'acme-corp.example'), 422, 'domain_unverified', 'domain');
      expect((await api('GET', `/v1/organizations/${organizationId}/domains/acme-corp.example`)).json()).toMatchObject({
        status: 'pending',
      });
      expect(await eventsOf(ctx().service, ctx().projectId, 'organization.domain.verified')).not.toContainEqual(
        expect.objectContaining({ organization_id: organizationId }),
      );

      // The right value, beside a record of something else.
      dns.records.set(name, ['v=spf1 -all', added.txt_record.value]);
      const verified = await verify(organizationId, 'ACME-corp.example');
      expect(verified.statusCode, verified.body).toBe(200);
      expect(verified.json()).toMatchObject({ domain: 'acme-corp.example', status: 'verified', verified_at: expect.any(String) });
      expect(await eventsOf(ctx().service, ctx().projectId, 'organization.domain.verified')).toContainEqual({
        organization_id: organizationId,
        domain: 'acme-corp.example',
        verification: 'dns',
      });
      // Verifying again answers the same, without a second event.
      dns.records.delete(name);
      expect((await verify(organizationId, 'acme-corp.example')).json()).toMatchObject({ status: 'verified' });
      const events = (await eventsOf(ctx().service, ctx().projectId, 'organization.domain.verified')).filter(
        (event) => event['organization_id'] === organizationId,
      );
      expect(events).toHaveLength(1);
      expect(await auditOf(organizationId)).toEqual([
        'organization_domain.add:success',
        'organization_domain.verify:domain_unverified',
        'organization_domain.verify:domain_unverified',
        'organization_domain.verify:domain_unverified',
        'organization_domain.verify:success',
      ]);
    });

    it('finds the value beside a record long enough to take several strings', async () => {
      const organizationId = await organization();
      const added = await addDomain(organizationId, 'split.example', 'dns');
      dns.records.set(added.txt_record.name, ['x'.repeat(300), added.txt_record.value]);
      expect((await verify(organizationId, 'split.example')).json()).toMatchObject({ status: 'verified' });
    });
  });

  describe('rules', () => {
    it('manual is verified at once; a domain is verified for one organization at most (409 domain_taken)', async () => {
      const first = await organization();
      const second = await organization();
      const manual = await addDomain(first, 'owned.example', 'manual');
      expect(manual).toMatchObject({ status: 'verified', verification: 'manual', verified_at: manual.created_at });
      expect(await eventsOf(ctx().service, ctx().projectId, 'organization.domain.verified')).toContainEqual({
        organization_id: first,
        domain: 'owned.example',
        verification: 'manual',
      });
      expectError(
        await api('POST', `/v1/organizations/${second}/domains`, { domain: 'owned.example', verification: 'manual' }),
        409,
        'domain_taken',
      );
      expectError(
        await api('POST', `/v1/organizations/${second}/domains`, { domain: 'OWNED.example', verification: 'dns' }),
        409,
        'domain_taken',
      );
      // The same organization twice.
      expectError(
        await api('POST', `/v1/organizations/${first}/domains`, { domain: 'owned.example', verification: 'dns' }),
        409,
        'domain_taken',
      );

      // Pending at two organizations: the first to verify has it, the second's verification is refused.
      const contested = await addDomain(first, 'contested.example', 'dns');
      const rival = await addDomain(second, 'contested.example', 'dns');
      expect(rival.txt_record.value).not.toBe(contested.txt_record.value);
      dns.records.set('_svc-verification.contested.example', [contested.txt_record.value, rival.txt_record.value]);
      expect((await verify(second, 'contested.example')).json()).toMatchObject({ status: 'verified' });
      expectError(await verify(first, 'contested.example'), 409, 'domain_taken');

      // Once removed, another organization may verify it.
      const removed = await api('DELETE', `/v1/organizations/${first}/domains/owned.example`);
      expect(removed.json()).toEqual({ object: 'organization_domain', organization_id: first, domain: 'owned.example', deleted: true });
      expect((await addDomain(second, 'owned.example', 'manual')).status).toBe('verified');
    });

    it('two organizations verifying one domain at once: exactly one wins', async () => {
      const organizations = await Promise.all([organization(), organization(), organization()]);
      const values: string[] = [];
      for (const organizationId of organizations) values.push((await addDomain(organizationId, 'race.example', 'dns')).txt_record.value);
      dns.records.set('_svc-verification.race.example', values);
      const answers = await Promise.all(organizations.map((organizationId) => verify(organizationId, 'race.example')));
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 409, 409]);
      const verified = await ctx()
        .service.db.kysely.selectFrom('organization_domains')
        .select('organization_id')
        .where('project_id', '=', ctx().projectId)
        .where('domain', '=', 'race.example')
        .where('status', '=', 'verified')
        .execute();
      expect(verified).toHaveLength(1);
    });

    it('refuses public mail domains (422 domain_not_allowed) and malformed names (400 parameter_invalid)', async () => {
      const organizationId = await organization();
      for (const domain of [
        'gmail.com',
        'GoogleMail.com',
        'outlook.com',
        'proton.me',
        'gmx.de',
        'gmx.net',
        'mail.ru',
        'qq.com',
        '163.com',
        'mail.gmail.com',
      ]) {
        expectError(
          await api('POST', `/v1/organizations/${organizationId}/domains`, { domain, verification: 'manual' }),
          422,
          'domain_not_allowed',
          'domain',
        );
      }
      for (const domain of [
        'localhost',
        'example',
        'exa mple.com',
        'under_score.example',
        '-lead.example',
        'trail-.example',
        'a..b.example',
        '192.168.0.1',
        `${'a'.repeat(64)}.example`,
        'http://x.example',
        'x.example/path',
      ]) {
        expectError(
          await api('POST', `/v1/organizations/${organizationId}/domains`, { domain, verification: 'dns' }),
          400,
          'parameter_invalid',
          'domain',
        );
      }
      expectError(
        await api('POST', `/v1/organizations/${organizationId}/domains`, { domain: 'x.example', verification: 'email' }),
        400,
        'parameter_invalid',
        'verification',
      );
      expectError(
        await api('POST', `/v1/organizations/${organizationId}/domains`, { domain: 'x.example' }),
        400,
        'parameter_missing',
        'verification',
      );
      expectError(
        await api('POST', '/v1/organizations/org_missing/domains', { domain: 'x.example', verification: 'dns' }),
        404,
        'resource_missing',
      );
      expect(await auditOf(organizationId)).toContain('organization_domain.add:domain_not_allowed');
    });

    it('stores an internationalized name as punycode and finds it by either spelling', async () => {
      const organizationId = await organization();
      const added = await addDomain(organizationId, 'Bücher.example', 'dns');
      expect(added.domain).toBe('xn--bcher-kva.example');
      expect(added.txt_record.name).toBe('_svc-verification.xn--bcher-kva.example');
      const byUnicode = await api('GET', `/v1/organizations/${organizationId}/domains/${encodeURIComponent('bücher.example')}`);
      expect(byUnicode.json()).toMatchObject({ domain: 'xn--bcher-kva.example' });
      dns.records.set(added.txt_record.name, [added.txt_record.value]);
      expect((await verify(organizationId, 'xn--bcher-kva.example')).json()).toMatchObject({ status: 'verified' });
    });
  });

  describe('reads and removal', () => {
    it('lists newest first with pagination, retrieves, removes; other projects see nothing', async () => {
      const organizationId = await organization();
      for (const domain of ['one.example', 'two.example', 'three.example']) await addDomain(organizationId, domain, 'dns');
      const page = await api('GET', `/v1/organizations/${organizationId}/domains?limit=2`);
      const first = page.json<{ object: string; data: DomainBody[]; has_more: boolean }>();
      expect(first.object).toBe('list');
      expect(first.has_more).toBe(true);
      expect(first.data).toHaveLength(2);
      const rest = await api('GET', `/v1/organizations/${organizationId}/domains?limit=2&starting_after=${first.data[1]?.domain ?? ''}`);
      const second = rest.json<{ data: DomainBody[]; has_more: boolean }>();
      expect(second.has_more).toBe(false);
      expect([...first.data, ...second.data].map((domain) => domain.domain).sort()).toEqual([
        'one.example',
        'three.example',
        'two.example',
      ]);
      expectError(await api('GET', `/v1/organizations/${organizationId}/domains?starting_after=none.example`), 404, 'resource_missing');

      expect((await api('GET', `/v1/organizations/${organizationId}/domains/two.example`)).json()).toMatchObject({ domain: 'two.example' });
      expect((await api('DELETE', `/v1/organizations/${organizationId}/domains/two.example`)).statusCode).toBe(200);
      expectError(await api('GET', `/v1/organizations/${organizationId}/domains/two.example`), 404, 'resource_missing', 'domain');
      expectError(await api('DELETE', `/v1/organizations/${organizationId}/domains/two.example`), 404, 'resource_missing');
      expectError(await verify(organizationId, 'two.example'), 404, 'resource_missing');

      const { secretKey } = await ctx().service.projects.createProject({ name: 'Other' });
      const foreign = await call({
        method: 'GET',
        url: `/v1/organizations/${organizationId}/domains/one.example`,
        headers: { authorization: `Bearer ${secretKey}` },
      });
      expectError(foreign, 404, 'resource_missing');
      expect(await auditOf(organizationId)).toContain('organization_domain.remove:success');
    });

    it('deleting the organization deletes its domains', async () => {
      const organizationId = await organization();
      await addDomain(organizationId, 'gone-with-it.example', 'manual');
      expect((await api('DELETE', `/v1/organizations/${organizationId}`)).statusCode).toBe(200);
      const other = await organization();
      expect((await addDomain(other, 'gone-with-it.example', 'manual')).status).toBe('verified');
    });
  });
});
