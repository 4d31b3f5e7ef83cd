import { sql } from 'kysely';
import { describe, expect, inject, it } from 'vitest';
import { inTransaction } from '../../db/transaction.js';
import { useTestService } from '../../test/service.js';
import { SYSTEM_AUDIT_CONTEXT } from './audit.context.js';
import { auditReader } from './audit.testing.js';

/**
 * PostgreSQL seals entries in the order of the transactions that wrote them (migration 0013,
 * docs/adr/0007-audit-log.md). Transactions commit out of that order; an entry must never be
 * sealed while a transaction with a smaller id could still commit one. SQLite has one writer at
 * a time, so the case cannot arise there.
 */
describe.skipIf(inject('postgresAdminUrl') === '')('audit sealing order (PostgreSQL)', () => {
  const current = useTestService('postgres');

  it('waits for a transaction that commits after a later one, then chains both in transaction order', async () => {
    const { service } = current();
    const { project, secretKey } = await service.projects.createProject({ name: 'Late commit' });
    const reader = auditReader(service, secretKey);
    const sealJob = service.jobs.find((candidate) => candidate.name === 'audit-seal')!;
    const entry = (id: string) => ({ projectId: project.id, action: 'role.create' as const, resource: { type: 'role', id } });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let recorded!: () => void;
    const earlyRecorded = new Promise<void>((resolve) => (recorded = resolve));
    // The early transaction writes its entry first (and so has the smaller id), and stays open
    // while a later one commits.
    const early = inTransaction(service.db, async (trx) => {
      await service.audit.record(trx, SYSTEM_AUDIT_CONTEXT, entry('early'));
      recorded();
      await released;
    });
    try {
      await earlyRecorded;
      await inTransaction(service.db, (trx) => service.audit.record(trx, SYSTEM_AUDIT_CONTEXT, entry('late')));
      await sealJob.run();
      const whileOpen = await reader.all({ action: 'role.create' });
      expect(whileOpen.map((item) => item.resource.id)).toEqual(['late']);
      // Sealed now, it would be ahead of the early entry, which commits behind the sealing cursor.
      expect(whileOpen[0]!.hash).toBeNull();
    } finally {
      // Never left open: a running transaction holds back sealing in every database of the cluster.
      release();
      await early;
    }
    // Sealing waits for every transaction older than the entries, in any database of the cluster:
    // another test file's transaction may hold it back for a moment, so seal until done (bounded).
    let sealed = await reader.all();
    for (const deadline = Date.now() + 15_000; Date.now() < deadline;) {
      await sealJob.run();
      sealed = await reader.all();
      if (sealed.every((item) => item.hash !== null)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(sealed.every((item) => item.hash !== null)).toBe(true);
    const links = await service.db.kysely
      .selectFrom('audit_chain')
      .select(['seq', 'entry_id'])
      .where('project_id', '=', project.id)
      .orderBy('seq')
      .execute();
    const resourceOf = new Map(sealed.map((item) => [item.id, item.resource.id]));
    expect(links.map((link) => resourceOf.get(link.entry_id))).toEqual([expect.stringMatching(/^key_/), 'early', 'late']);
    // The project's first entry is its key's creation. Sealing again chains nothing twice.
    await Promise.all([sealJob.run(), service.audit.seal(project.id)]);
    expect(await service.audit.verify(project.id)).toMatchObject({ ok: true, broken: null, links_checked: 3 });
  });

  it('an explicit seal chains a backlog longer than one pass of the job', async () => {
    const { service } = current();
    const { project } = await service.projects.createProject({ name: 'Backlog' });
    // 21 sealing batches: one more than a pass of the periodic job takes.
    const backlog = 21_000;
    await sql`insert into audit_log (id, project_id, created_at, action, actor_type, resource_type, outcome, changes)
              select 'aud_' || lpad(g::text, 31, '0'), ${project.id}, '2026-11-21T00:00:00.000Z', 'role.create', 'system', 'role', 'success', '{}'
              from generate_series(1, ${backlog}) as g`.execute(service.db.kysely);
    // The project's key, then the backlog.
    expect(await service.audit.verify(project.id)).toMatchObject({ ok: true, broken: null, links_checked: backlog + 1 });
  });

  it('an explicit seal waits for the transactions running when it was called', async () => {
    const { service } = current();
    const { project } = await service.projects.createProject({ name: 'Explicit seal' });
    let recorded!: () => void;
    const earlyRecorded = new Promise<void>((resolve) => (recorded = resolve));
    const open = inTransaction(service.db, async (trx) => {
      await service.audit.record(trx, SYSTEM_AUDIT_CONTEXT, {
        projectId: project.id,
        action: 'role.create',
        resource: { type: 'role', id: 'x' },
      });
      recorded();
      await new Promise((resolve) => setTimeout(resolve, 200));
    });
    await earlyRecorded;
    // `svc audit verify` seals first: it must see the entry of a transaction that was running.
    const report = service.audit.verify(project.id);
    await open;
    expect(await report).toMatchObject({ ok: true, links_checked: 2 });
  });
});
