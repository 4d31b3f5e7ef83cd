import { randomBytes } from 'node:crypto';
import { domainToASCII } from 'node:url';
import type { Db } from '../../db/database.js';
import { listOf, startPage } from '../../db/pagination.js';
import { inTransaction, isUniqueViolation, rowLockFor, type Transaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import type { AuditAction, AuditContext, AuditService } from '../audit/audit.service.js';
import { recordEvent } from '../events/events.service.js';
import type { TxtLookup } from './domains.dns.js';
import type {
  AddDomainBody,
  DeletedOrganizationDomain,
  DomainsPageQuery,
  OrganizationDomain,
  OrganizationDomainList,
} from './domains.schemas.js';
import * as store from './domains.store.js';
import { findOrganization } from './organizations.store.js';
import { isPublicMailDomain } from './public-mail-domains.js';

export type { TxtLookup } from './domains.dns.js';

/** Where the TXT record of a domain is looked up: a name of its own, so it never clashes with the domain's other records. */
export const TXT_RECORD_PREFIX = '_svc-verification.';
const TXT_VALUE_PREFIX = 'svc-verification=';
const DOMAIN_LENGTH_MAX = 253;
const LABEL_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// eslint-disable-next-line no-control-regex -- control characters are among those refused
const ASCII_OUTSIDE_NAMES = /[\x00-\x2c\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]/;

/**
 * What another module does when an organization's domain goes, in the removal's transaction: the
 * SSO module takes it off the organization's connection, whose domains are the organization's
 * verified domains.
 */
export type DomainRemovalStep = (trx: Transaction, domain: { projectId: string; organizationId: string; domain: string }) => Promise<void>;

export interface OrganizationDomainsServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly audit: AuditService;
  /** The TXT lookup of `POST …/verify` (`DNS_SERVERS`). */
  readonly lookupTxt: TxtLookup;
  readonly removalSteps?: readonly DomainRemovalStep[];
}

/**
 * An organization's email domains (docs/adr/0011-sso.md, "Domains"): claimed by the operator,
 * verified by a TXT record or by the operator's word, verified for one organization of a project
 * at most (the partial unique index of migration 0032 decides, so two organizations verifying at
 * once cannot both win). Public mail domains are never anyone's.
 */
export class OrganizationDomainsService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #audit: AuditService;
  readonly #lookupTxt: TxtLookup;
  readonly #removalSteps: readonly DomainRemovalStep[];

  constructor(options: OrganizationDomainsServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#audit = options.audit;
    this.#lookupTxt = options.lookupTxt;
    this.#removalSteps = options.removalSteps ?? [];
  }

  /** Adds a domain: pending with its TXT record to publish, or verified at once (`manual`). */
  async add(projectId: string, organizationId: string, body: AddDomainBody, context: AuditContext): Promise<OrganizationDomain> {
    return this.#audited(context, projectId, organizationId, 'organization_domain.add', async () => {
      const domain = normalizeDomain(body.domain, 'domain');
      if (isPublicMailDomain(domain)) {
        throw new ApiError('domain_not_allowed', `${domain} is a public mail domain: anyone can have an address there.`, {
          param: 'domain',
        });
      }
      const now = isoTime(this.#clock.now());
      const verified = body.verification === 'manual';
      const row: store.DomainRow = {
        project_id: projectId,
        organization_id: organizationId,
        domain,
        verification: body.verification,
        status: verified ? 'verified' : 'pending',
        txt_value: `${TXT_VALUE_PREFIX}${randomBytes(24).toString('base64url')}`,
        created_at: now,
        verified_at: verified ? now : null,
      };
      await inTransaction(this.#db, async (trx) => {
        await this.#requireOrganization(trx, projectId, organizationId);
        if ((await store.findDomain(trx, projectId, organizationId, domain)) !== undefined) {
          throw new ApiError('domain_taken', `Organization ${organizationId} has ${domain} already.`, { param: 'domain' });
        }
        // A domain another organization has verified can never be verified here: refused now rather than at verification.
        await this.#requireNotVerifiedElsewhere(trx, projectId, organizationId, domain);
        await this.#writingVerified(domain, () => store.insertDomain(trx, row));
        if (verified) await this.#recordVerified(trx, row);
        await this.#audit.record(trx, context, {
          ...domainRecord(projectId, organizationId, 'organization_domain.add'),
          changes: { domain, verification: row.verification, status: row.status },
          createdAt: now,
        });
      });
      return toOrganizationDomain(row);
    });
  }

  async get(projectId: string, organizationId: string, rawDomain: string): Promise<OrganizationDomain> {
    await this.#requireOrganization(this.#db.kysely, projectId, organizationId);
    return toOrganizationDomain(await this.#requireDomain(this.#db.kysely, projectId, organizationId, rawDomain));
  }

  async list(projectId: string, organizationId: string, query: DomainsPageQuery): Promise<OrganizationDomainList> {
    await this.#requireOrganization(this.#db.kysely, projectId, organizationId);
    const page = await startPage(query, {
      find: (domain) => store.findDomain(this.#db.kysely, projectId, organizationId, normalizeDomain(domain, 'starting_after')),
      missing: (domain) => `No domain ${domain} to start after.`,
    });
    const rows = await store.listDomains(this.#db.kysely, projectId, organizationId, { after: page.after, limit: page.rowsToRead });
    return listOf(rows, page.limit, toOrganizationDomain);
  }

  /**
   * Looks the TXT record up and marks the domain verified when one of the name's records holds its
   * value exactly; 422 `domain_unverified` otherwise. A verified domain answers as it is.
   */
  async verify(projectId: string, organizationId: string, rawDomain: string, context: AuditContext): Promise<OrganizationDomain> {
    return this.#audited(context, projectId, organizationId, 'organization_domain.verify', async () => {
      await this.#requireOrganization(this.#db.kysely, projectId, organizationId);
      const pending = await this.#requireDomain(this.#db.kysely, projectId, organizationId, rawDomain);
      if (pending.status === 'verified') return toOrganizationDomain(pending);
      await this.#requireNotVerifiedElsewhere(this.#db.kysely, projectId, organizationId, pending.domain);
      // The lookup happens outside the transaction: it may take seconds, and holds nothing.
      await this.#requireTxtRecord(pending);
      const verified = await inTransaction(this.#db, async (trx) => {
        const now = isoTime(this.#clock.now());
        const row = await this.#writingVerified(pending.domain, () =>
          store.markVerified(trx, { projectId, organizationId, domain: pending.domain, now }),
        );
        // Verified (or removed) by a concurrent request since it was read.
        if (row === undefined) return this.#requireDomain(trx, projectId, organizationId, pending.domain);
        await this.#recordVerified(trx, row);
        await this.#audit.record(trx, context, {
          ...domainRecord(projectId, organizationId, 'organization_domain.verify'),
          changes: { domain: row.domain, verification: row.verification },
          createdAt: now,
        });
        return row;
      });
      return toOrganizationDomain(verified);
    });
  }

  /** Removes a domain; the organization's SSO connection stops answering for it in the same transaction. */
  async remove(projectId: string, organizationId: string, rawDomain: string, context: AuditContext): Promise<DeletedOrganizationDomain> {
    const domain = await this.#audited(context, projectId, organizationId, 'organization_domain.remove', () =>
      inTransaction(this.#db, async (trx) => {
        await this.#requireOrganization(trx, projectId, organizationId, rowLockFor(this.#db.dialect));
        const row = await this.#requireDomain(trx, projectId, organizationId, rawDomain);
        await store.deleteDomain(trx, projectId, organizationId, row.domain);
        for (const step of this.#removalSteps) await step(trx, { projectId, organizationId, domain: row.domain });
        await this.#audit.record(trx, context, {
          ...domainRecord(projectId, organizationId, 'organization_domain.remove'),
          changes: { domain: row.domain, status: row.status },
        });
        return row.domain;
      }),
    );
    return { object: 'organization_domain', organization_id: organizationId, domain, deleted: true };
  }

  async #requireTxtRecord(row: store.DomainRow): Promise<void> {
    const name = `${TXT_RECORD_PREFIX}${row.domain}`;
    const answer = await this.#lookupTxt(name);
    if (answer.kind === 'records' && answer.texts.includes(row.txt_value)) return;
    const found =
      answer.kind === 'failed'
        ? `the lookup of ${name} failed (${answer.reason}); try again later`
        : answer.kind === 'none'
          ? `no TXT record at ${name}`
          : `the TXT records at ${name} do not hold the expected value`;
    throw new ApiError('domain_unverified', `${row.domain} is not verified: ${found}.`, { param: 'domain' });
  }

  async #requireNotVerifiedElsewhere(executor: Transaction, projectId: string, organizationId: string, domain: string): Promise<void> {
    const owner = await store.findVerifiedOwner(executor, projectId, domain);
    if (owner !== undefined && owner !== organizationId) throw domainTaken(domain);
  }

  /** Runs a write that may verify `domain`, turning the partial unique index's refusal into 409 `domain_taken`. */
  async #writingVerified<T>(domain: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error)) throw domainTaken(domain);
      throw error;
    }
  }

  async #recordVerified(trx: Transaction, row: store.DomainRow): Promise<void> {
    await recordEvent(trx, {
      projectId: row.project_id,
      type: 'organization.domain.verified',
      data: { organization_id: row.organization_id, domain: row.domain, verification: row.verification },
      createdAt: row.verified_at ?? row.created_at,
    });
  }

  async #requireOrganization(executor: Transaction, projectId: string, organizationId: string, lock: 'none' | 'for update' = 'none') {
    if ((await findOrganization(executor, projectId, organizationId, lock)) === undefined) {
      throw new ApiError('resource_missing', `No organization ${organizationId}.`, { param: 'id' });
    }
  }

  async #requireDomain(executor: Transaction, projectId: string, organizationId: string, rawDomain: string): Promise<store.DomainRow> {
    const domain = normalizeDomain(rawDomain, 'domain');
    const row = await store.findDomain(executor, projectId, organizationId, domain);
    if (row === undefined)
      throw new ApiError('resource_missing', `Organization ${organizationId} has no domain ${domain}.`, { param: 'domain' });
    return row;
  }

  #audited<T>(context: AuditContext, projectId: string, organizationId: string, action: AuditAction, change: () => Promise<T>): Promise<T> {
    return this.#audit.recordingRefusals(context, domainRecord(projectId, organizationId, action), change);
  }
}

/**
 * A domain name as stored: lower case, without the trailing dot of a fully qualified name,
 * internationalized names as punycode (`domainToASCII`), two or more labels of letters, digits
 * and inner hyphens, the last one not all digits (an IP address is not a domain).
 * 400 `parameter_invalid` otherwise.
 */
export function normalizeDomain(raw: string, param: string): string {
  // domainToASCII parses a URL host: it would read `x.example/path` as `x.example`. Any ASCII
  // beyond letters, digits, dots and hyphens makes it something other than a domain name.
  const ascii = ASCII_OUTSIDE_NAMES.test(raw) ? '' : domainToASCII(raw.toLowerCase().replace(/\.$/, ''));
  const labels = ascii.split('.');
  const valid =
    ascii.length > 0 &&
    ascii.length <= DOMAIN_LENGTH_MAX &&
    labels.length >= 2 &&
    labels.every((label) => LABEL_PATTERN.test(label)) &&
    !/^\d+$/.test(labels[labels.length - 1] ?? '');
  if (!valid) throw new ApiError('parameter_invalid', `${param} must be a domain name such as example.com.`, { param });
  return ascii;
}

function domainTaken(domain: string): ApiError {
  return new ApiError('domain_taken', `Another organization of this project has verified ${domain}.`, { param: 'domain' });
}

function domainRecord(projectId: string, organizationId: string, action: AuditAction) {
  return { projectId, action, resource: { type: 'organization', id: organizationId } };
}

function toOrganizationDomain(row: store.DomainRow): OrganizationDomain {
  return {
    object: 'organization_domain',
    organization_id: row.organization_id,
    domain: row.domain,
    status: row.status,
    verification: row.verification,
    txt_record: { name: `${TXT_RECORD_PREFIX}${row.domain}`, value: row.txt_value },
    created_at: row.created_at,
    verified_at: row.verified_at,
  };
}
