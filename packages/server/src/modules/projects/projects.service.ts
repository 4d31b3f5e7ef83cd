import type { Db } from '../../db/database.js';
import { findCursor, pageOf } from '../../db/pagination.js';
import { inTransaction, isUniqueViolation } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { ApiError } from '../../lib/errors.js';
import { newId, randomBase62 } from '../../lib/ids.js';
import { type AuditContext, type AuditRecord, type AuditService, SYSTEM_AUDIT_CONTEXT } from '../audit/audit.service.js';
import * as store from './projects.store.js';
import { checkRelyingParty, parseRelyingParty, type RelyingParty } from './relying-party.js';

export const SECRET_KEY_PREFIX = 'svc_sk_';
/** 43 base62 characters ≈ 256 bits. */
const SECRET_KEY_RANDOM_LENGTH = 43;
const SECRET_KEY_PATTERN = /^svc_sk_[0-9A-Za-z]{32,128}$/;

export interface Project {
  readonly id: string;
  readonly object: 'project';
  readonly name: string;
  /** The relying party of the project's passkeys; null until set with `PATCH /v1/project`. */
  readonly webauthn: RelyingParty | null;
  readonly created_at: string;
}

/** `PATCH /v1/project`: each field changes only when given; `webauthn: null` removes the relying party. */
export interface ProjectChanges {
  readonly name?: string | undefined;
  readonly webauthn?: RelyingParty | null | undefined;
}

export interface ApiKey {
  readonly id: string;
  readonly object: 'api_key';
  readonly project_id: string;
  readonly name: string | null;
  readonly prefix: string;
  readonly last4: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
}

/** Who a valid secret key belongs to. */
export interface SecretKeyPrincipal {
  readonly projectId: string;
  readonly keyId: string;
}

export interface ProjectsServiceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly audit: AuditService;
  /**
   * How long a successful key lookup is reused in this process. Revocation takes effect at once in
   * the process that revoked and within this time in the others. See docs/adr/0003-secret-key-cache.md.
   */
  readonly keyCacheTtlMs?: number;
}

const KEY_CACHE_ENTRIES_MAX = 10_000;

export class ProjectsService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #audit: AuditService;
  readonly #keyCacheTtlMs: number;
  readonly #keyCache = new Map<string, { principal: SecretKeyPrincipal; keyHash: string; expiresAtMs: number }>();
  /** Projects seen by a key lookup, reused for the same time as the key, so that `GET /v1/project` costs no query. */
  readonly #projectCache = new Map<string, { project: Project; expiresAtMs: number }>();

  constructor(options: ProjectsServiceOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#audit = options.audit;
    this.#keyCacheTtlMs = options.keyCacheTtlMs ?? 1000;
  }

  /** Creates a project and its first secret key; the key is returned here and never again. */
  async createProject(input: { name: string; secretKey?: string }): Promise<{ project: Project; secretKey: string }> {
    const name = input.name.trim();
    if (name === '' || name.length > 200)
      throw new ApiError('parameter_invalid', 'A project name is 1 to 200 characters.', { param: 'name' });
    const createdAt = isoTime(this.#clock.now());
    const project: store.ProjectRow = { id: newId('prj'), name, created_at: createdAt, webauthn: null };
    const secretKey = input.secretKey ?? generateSecretKey();
    await inTransaction(this.#db, async (trx) => {
      await store.insertProject(trx, project);
      const key = keyRow(project.id, secretKey, createdAt, 'default');
      await store.insertApiKey(trx, key);
      await this.#audit.record(trx, SYSTEM_AUDIT_CONTEXT, keyCreated(key));
    });
    return { project: toProject(project), secretKey };
  }

  /**
   * On first start with `SVC_SECRET_KEY` set and no project at all, creates a default project with
   * that key. Returns the project when it created one.
   *
   * Several processes may start at once on an empty database (`serve` beside `worker`): all see no
   * project, and the unique key hash lets exactly one insert win. The project and its key are one
   * transaction, so a loser leaves nothing behind and simply finds the winner's project in place.
   */
  async ensureBootstrapProject(secretKey: string): Promise<Project | undefined> {
    if ((await store.countProjects(this.#db.kysely)) > 0) return undefined;
    try {
      const { project } = await this.createProject({ name: 'Default project', secretKey });
      return project;
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  async getProject(projectId: string): Promise<Project> {
    const cached = this.#projectCache.get(projectId);
    if (cached !== undefined && cached.expiresAtMs > Date.now()) return cached.project;
    const row = await store.findProject(this.#db.kysely, projectId);
    if (row === undefined) throw new ApiError('resource_missing', `No project ${projectId}.`, { param: 'project' });
    return toProject(row);
  }

  /** Changes the project's name or relying party (`PATCH /v1/project`), with an audit entry naming what changed. */
  async updateProject(projectId: string, changes: ProjectChanges, options: { context: AuditContext }): Promise<Project> {
    const set: { name?: string; webauthn?: string | null } = {};
    const recorded: Record<string, string | null> = {};
    if (changes.name !== undefined) {
      const name = changes.name.trim();
      if (name === '' || name.length > 200)
        throw new ApiError('parameter_invalid', 'A project name is 1 to 200 characters.', { param: 'name' });
      set.name = name;
      recorded['name'] = name;
    }
    if (changes.webauthn !== undefined) {
      set.webauthn = changes.webauthn === null ? null : JSON.stringify(checkRelyingParty(changes.webauthn));
      recorded['webauthn'] = set.webauthn;
    }
    const row = await inTransaction(this.#db, async (trx) => {
      await store.updateProject(trx, projectId, set);
      const found = await store.findProject(trx, projectId);
      if (found === undefined) throw new ApiError('resource_missing', `No project ${projectId}.`, { param: 'project' });
      if (Object.keys(set).length > 0) {
        await this.#audit.record(trx, options.context, {
          projectId,
          action: 'project.update',
          resource: { type: 'project', id: projectId },
          changes: recorded,
        });
      }
      return found;
    });
    this.#projectCache.delete(projectId);
    return toProject(row);
  }

  /**
   * The project's relying party, read from the database on every call (no cache: a ceremony must
   * check origins against the configuration in force), or 400 `webauthn_not_configured`.
   */
  async getRelyingParty(projectId: string): Promise<RelyingParty> {
    const row = await store.findProject(this.#db.kysely, projectId);
    const relyingParty = row === undefined ? undefined : parseRelyingParty(row.webauthn);
    if (relyingParty === undefined) {
      throw new ApiError(
        'webauthn_not_configured',
        'This project has no passkey relying party; set `webauthn: {rp_id, rp_name, origins}` with PATCH /v1/project.',
      );
    }
    return relyingParty;
  }

  /** Creates a secret key; `context` names who asked (the CLI is the system actor, the default). */
  async createKey(
    projectId: string,
    input: { name?: string; context?: AuditContext } = {},
  ): Promise<{ apiKey: ApiKey; secretKey: string }> {
    await this.getProject(projectId);
    const secretKey = generateSecretKey();
    const row = keyRow(projectId, secretKey, isoTime(this.#clock.now()), input.name ?? null);
    await inTransaction(this.#db, async (trx) => {
      await store.insertApiKey(trx, row);
      await this.#audit.record(trx, input.context ?? SYSTEM_AUDIT_CONTEXT, keyCreated(row));
    });
    return { apiKey: toApiKey(row), secretKey };
  }

  async listKeys(projectId: string): Promise<ApiKey[]> {
    return (await store.listApiKeys(this.#db.kysely, projectId)).map(toApiKey);
  }

  /** One page of the project's keys, newest first (`GET /v1/api-keys`). */
  async listKeysPage(
    projectId: string,
    page: { limit: number; startingAfter?: string | undefined },
  ): Promise<{ data: ApiKey[]; hasMore: boolean }> {
    const after = await findCursor(page.startingAfter, {
      find: (id) => store.findApiKey(this.#db.kysely, projectId, id),
      missing: (id) => `No API key ${id}.`,
    });
    const rows = await store.listApiKeysPage(this.#db.kysely, projectId, { limit: page.limit + 1, after });
    const { rows: shown, has_more } = pageOf(rows, page.limit);
    return { data: shown.map(toApiKey), hasMore: has_more };
  }

  /** Revokes a key (the CLI's `svc key revoke`, recorded with the system actor). Revoking it again changes nothing. */
  async revokeKey(projectId: string, keyId: string, options: { context?: AuditContext } = {}): Promise<ApiKey> {
    const { revoked, row } = await inTransaction(this.#db, async (trx) => {
      const now = isoTime(this.#clock.now());
      const changed = await store.revokeApiKey(trx, projectId, keyId, now);
      const found = await store.findApiKey(trx, projectId, keyId);
      if (found === undefined) throw new ApiError('resource_missing', `No API key ${keyId}.`, { param: 'key' });
      if (changed) {
        await this.#audit.record(trx, options.context ?? SYSTEM_AUDIT_CONTEXT, {
          projectId,
          action: 'secret_key.revoke',
          resource: { type: 'secret_key', id: keyId },
          createdAt: now,
        });
      }
      return { revoked: changed, row: found };
    });
    if (revoked) {
      for (const [secretKey, entry] of this.#keyCache) if (entry.keyHash === row.key_hash) this.#keyCache.delete(secretKey);
    }
    return toApiKey(row);
  }

  /**
   * Whether a key exists in the project and is not revoked, read from the database every time (no
   * cache): dashboard sessions ask on every request, so revoking a key ends them at once everywhere.
   */
  async isKeyLive(projectId: string, keyId: string): Promise<boolean> {
    const row = await store.findApiKey(this.#db.kysely, projectId, keyId);
    return row !== undefined && row.revoked_at === null;
  }

  /** The project and key a secret key belongs to, or undefined when it is unknown or revoked. */
  async authenticateSecretKey(secretKey: string): Promise<SecretKeyPrincipal | undefined> {
    if (!SECRET_KEY_PATTERN.test(secretKey)) return undefined;
    // The cache is keyed by the key itself, so a hit costs no hash; the key is only ever in this
    // process's memory, as it is in every request that carries it.
    const nowMs = Date.now();
    const cached = this.#keyCache.get(secretKey);
    if (cached !== undefined && cached.expiresAtMs > nowMs) return cached.principal;
    const keyHash = sha256Hex(secretKey);
    const row = await store.findApiKeyByHash(this.#db.kysely, keyHash);
    if (row === undefined || row.revoked_at !== null) {
      this.#keyCache.delete(secretKey);
      return undefined;
    }
    const principal: SecretKeyPrincipal = { projectId: row.project_id, keyId: row.key_id };
    if (this.#keyCacheTtlMs > 0) {
      if (this.#keyCache.size >= KEY_CACHE_ENTRIES_MAX) this.#keyCache.clear();
      if (this.#projectCache.size >= KEY_CACHE_ENTRIES_MAX) this.#projectCache.clear();
      const expiresAtMs = nowMs + this.#keyCacheTtlMs;
      this.#keyCache.set(secretKey, { principal, keyHash, expiresAtMs });
      const project: store.ProjectRow = {
        id: row.project_id,
        name: row.project_name,
        created_at: row.project_created_at,
        webauthn: row.project_webauthn,
      };
      this.#projectCache.set(row.project_id, { project: toProject(project), expiresAtMs });
    }
    return principal;
  }
}

export function generateSecretKey(): string {
  return `${SECRET_KEY_PREFIX}${randomBase62(SECRET_KEY_RANDOM_LENGTH)}`;
}

function keyRow(projectId: string, secretKey: string, createdAt: string, name: string | null): store.ApiKeyRow {
  return {
    id: newId('key'),
    project_id: projectId,
    name,
    key_hash: sha256Hex(secretKey),
    prefix: secretKey.slice(0, SECRET_KEY_PREFIX.length + 4),
    last4: secretKey.slice(-4),
    created_at: createdAt,
    revoked_at: null,
  };
}

/** A key's entry names it by id and name: never the key, nor its prefix. */
function keyCreated(row: store.ApiKeyRow): AuditRecord {
  return {
    projectId: row.project_id,
    action: 'secret_key.create',
    resource: { type: 'secret_key', id: row.id },
    changes: { name: row.name },
    createdAt: row.created_at,
  };
}

function toProject(row: store.ProjectRow): Project {
  return { id: row.id, object: 'project', name: row.name, webauthn: parseRelyingParty(row.webauthn) ?? null, created_at: row.created_at };
}

function toApiKey(row: store.ApiKeyRow): ApiKey {
  return {
    id: row.id,
    object: 'api_key',
    project_id: row.project_id,
    name: row.name,
    prefix: row.prefix,
    last4: row.last4,
    created_at: row.created_at,
    revoked_at: row.revoked_at,
  };
}
