import type { Db } from '../../db/database.js';
import { inTransaction } from '../../db/transaction.js';
import { type Clock, isoTime } from '../../lib/clock.js';
import { ApiError } from '../../lib/errors.js';
import { checkRedirectUri } from '../../lib/redirect-uri.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AuditContext, AuditRecord, AuditService } from '../audit/audit.service.js';
import { parseApplePrivateKey } from './apple-client-secret.js';
import type { OAuthClient, ProviderSettings } from './oauth.client.js';
import { builtInKind, DEFAULT_SCOPES, isOpenIdConnect, PROVIDER_KEY_PATTERN, type ProviderKind } from './oauth.providers.js';
import { type ConfigureProviderBody, PROVIDERS_PER_PROJECT_MAX, type Provider } from './oauth.schemas.js';
import * as store from './oauth.store.js';

export interface OAuthProvidersOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly audit: AuditService;
  readonly client: OAuthClient;
  readonly secrets: SecretBox;
  /** `OAUTH_ALLOW_INSECURE_HTTP`: generic issuers may be `http://`. */
  readonly allowInsecureHttp: boolean;
}

interface SealedSecret {
  readonly client_secret?: string;
  readonly private_key?: string;
}

/**
 * Each project's OAuth provider configurations (docs/adr/0008-oauth.md): built-in Google, GitHub
 * and Apple, and generic OpenID Connect providers by key; client secrets and Apple keys sealed.
 */
export class OAuthProviders {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #audit: AuditService;
  readonly #client: OAuthClient;
  readonly #secrets: SecretBox;
  readonly #allowInsecureHttp: boolean;

  constructor(options: OAuthProvidersOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#audit = options.audit;
    this.#client = options.client;
    this.#secrets = options.secrets;
    this.#allowInsecureHttp = options.allowInsecureHttp;
  }

  async configure(projectId: string, provider: string, body: ConfigureProviderBody, context: AuditContext): Promise<Provider> {
    const record: AuditRecord = { projectId, action: 'oauth_provider.configure', resource: { type: 'oauth_provider', id: provider } };
    return this.#audit.recordingRefusals(context, record, () => this.#configure(projectId, provider, body, record, context));
  }

  async #configure(
    projectId: string,
    provider: string,
    body: ConfigureProviderBody,
    record: AuditRecord,
    context: AuditContext,
  ): Promise<Provider> {
    const kind = builtInKind(provider) ?? 'oidc';
    if (kind === 'oidc' && !PROVIDER_KEY_PATTERN.test(provider)) {
      throw new ApiError(
        'parameter_invalid',
        'A generic provider key is 2 to 64 lower-case letters, digits, `_` or `-`, starting with a letter.',
        { param: 'provider' },
      );
    }
    const existing = await store.findProvider(this.#db.kysely, projectId, provider);
    const issuer = this.#checkIssuer(kind, body.issuer);
    const redirectUris = body.redirect_uris.map((uri, index) => checkRedirectUri(uri, `redirect_uris[${index}]`));
    const scopes = withOpenId(kind, body.scopes ?? DEFAULT_SCOPES[kind]);
    const secret = this.#newSecret(kind, body, existing);
    // A cheap early refusal; the check that counts is the one in the transaction below.
    if (existing === undefined && (await store.countProviders(this.#db.kysely, projectId)) >= PROVIDERS_PER_PROJECT_MAX) {
      throw tooManyProviders();
    }
    // Discovery is checked now, so that a wrong issuer is refused here rather than at sign-in.
    // It is network I/O: it happens before the transaction, never inside it.
    if (issuer !== null) await this.#client.checkIssuer(issuer);
    const now = isoTime(this.#clock.now());
    const fields: Omit<store.ProviderRow, 'created_at'> = {
      project_id: projectId,
      provider,
      kind,
      client_id: body.client_id,
      secret_sealed: this.#secrets.seal(JSON.stringify(secret), secretContext(projectId, provider)),
      issuer,
      apple_team_id: body.apple?.team_id ?? null,
      apple_key_id: body.apple?.key_id ?? null,
      scopes: JSON.stringify(scopes),
      redirect_uris: JSON.stringify(redirectUris),
      updated_at: now,
    };
    const row = await inTransaction(this.#db, async (trx) => {
      // Concurrent requests for new keys each passed the check above; the project's lock makes
      // them count one after the other (SQLite's BEGIN IMMEDIATE already does).
      if (this.#db.dialect === 'postgres') await store.lockProjectProviders(trx, projectId);
      // Read again: a concurrent request may have created this key since, making this an update.
      const current = await store.findProvider(trx, projectId, provider);
      if (current === undefined && (await store.countProviders(trx, projectId)) >= PROVIDERS_PER_PROJECT_MAX) {
        throw tooManyProviders();
      }
      const upserted: store.ProviderRow = { ...fields, created_at: current?.created_at ?? now };
      await store.upsertProvider(trx, upserted);
      await this.#audit.record(trx, context, {
        ...record,
        // Never the client secret or key: which provider, and which redirect URIs it allows.
        changes: { kind, created: current === undefined, client_id: body.client_id, redirect_uris: redirectUris.join(' ') },
        createdAt: now,
      });
      return upserted;
    });
    return toProvider(row);
  }

  async list(projectId: string): Promise<{ object: 'list'; data: Provider[]; has_more: false }> {
    const rows = await store.listProviders(this.#db.kysely, projectId);
    return { object: 'list', data: rows.map(toProvider), has_more: false };
  }

  async remove(
    projectId: string,
    provider: string,
    context: AuditContext,
  ): Promise<{ object: 'oauth_provider'; provider: string; deleted: true }> {
    const record: AuditRecord = { projectId, action: 'oauth_provider.delete', resource: { type: 'oauth_provider', id: provider } };
    await this.#audit.recordingRefusals(context, record, () =>
      inTransaction(this.#db, async (trx) => {
        if (!(await store.deleteProvider(trx, projectId, provider))) throw notConfigured(provider);
        await this.#audit.record(trx, context, { ...record, createdAt: isoTime(this.#clock.now()) });
      }),
    );
    return { object: 'oauth_provider', provider, deleted: true };
  }

  /** A configured provider's row and its settings for the OpenID client, its secret opened. */
  async settings(projectId: string, provider: string): Promise<{ row: store.ProviderRow; settings: ProviderSettings }> {
    const row = await store.findProvider(this.#db.kysely, projectId, provider);
    if (row === undefined) {
      if (builtInKind(provider) !== undefined) throw notConfigured(provider);
      throw new ApiError('oauth_provider_unknown', `No provider ${provider}: use google, github, apple or a configured provider key.`, {
        param: 'provider',
      });
    }
    const secret = JSON.parse(this.#secrets.open(row.secret_sealed, secretContext(projectId, provider))) as SealedSecret;
    const apple =
      row.kind === 'apple' && row.apple_team_id !== null && row.apple_key_id !== null && secret.private_key !== undefined
        ? { teamId: row.apple_team_id, keyId: row.apple_key_id, privateKey: secret.private_key }
        : undefined;
    return {
      row,
      settings: {
        provider,
        kind: row.kind,
        clientId: row.client_id,
        clientSecret: secret.client_secret,
        issuer: row.issuer ?? undefined,
        apple,
        scopes: JSON.parse(row.scopes) as string[],
      },
    };
  }

  #checkIssuer(kind: ProviderKind, issuer: string | undefined): string | null {
    if (kind !== 'oidc') {
      if (issuer !== undefined) {
        throw new ApiError('parameter_invalid', 'issuer is for generic OpenID Connect providers; the built-in ones know theirs.', {
          param: 'issuer',
        });
      }
      return null;
    }
    if (issuer === undefined)
      throw new ApiError('parameter_missing', 'A generic OpenID Connect provider needs its issuer URL.', { param: 'issuer' });
    let url: URL;
    try {
      url = new URL(issuer);
    } catch {
      throw new ApiError('parameter_invalid', 'issuer must be a URL.', { param: 'issuer' });
    }
    const allowed = this.#allowInsecureHttp ? ['https:', 'http:'] : ['https:'];
    if (!allowed.includes(url.protocol) || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
      throw new ApiError('parameter_invalid', 'issuer must be an https:// URL without query, fragment or credentials.', {
        param: 'issuer',
      });
    }
    return issuer;
  }

  /** The secret part to store: new values from the body, or the stored ones when the body omits them. */
  #newSecret(kind: ProviderKind, body: ConfigureProviderBody, existing: store.ProviderRow | undefined): SealedSecret {
    const stored =
      existing === undefined
        ? {}
        : (JSON.parse(this.#secrets.open(existing.secret_sealed, secretContext(existing.project_id, existing.provider))) as SealedSecret);
    if (kind === 'apple') {
      if (body.client_secret !== undefined) {
        throw new ApiError(
          'parameter_invalid',
          "Apple's client secret is made from `apple.team_id`, `apple.key_id` and `apple.private_key`.",
          {
            param: 'client_secret',
          },
        );
      }
      if (body.apple === undefined)
        throw new ApiError('parameter_missing', 'Apple needs `apple.team_id`, `apple.key_id` and `apple.private_key`.', { param: 'apple' });
      const privateKey = body.apple.private_key ?? stored.private_key;
      if (privateKey === undefined)
        throw new ApiError('parameter_missing', 'Apple needs its private key the first time.', { param: 'apple.private_key' });
      if (parseApplePrivateKey(privateKey) === undefined) {
        throw new ApiError('parameter_invalid', 'apple.private_key must be the PEM of a P-256 (ES256) private key, as in the .p8 file.', {
          param: 'apple.private_key',
        });
      }
      return { private_key: privateKey };
    }
    if (body.apple !== undefined) throw new ApiError('parameter_invalid', '`apple` is for the apple provider only.', { param: 'apple' });
    const clientSecret = body.client_secret ?? stored.client_secret;
    if (clientSecret === undefined)
      throw new ApiError('parameter_missing', 'client_secret is required the first time.', { param: 'client_secret' });
    return { client_secret: clientSecret };
  }
}

/** Associated data of a provider's sealed secret: it opens only in its own row. */
export function secretContext(projectId: string, provider: string): string {
  return `oauth_provider:${projectId}:${provider}`;
}

function tooManyProviders(): ApiError {
  return new ApiError('parameter_invalid', `A project configures at most ${PROVIDERS_PER_PROJECT_MAX} providers.`, { param: 'provider' });
}

function notConfigured(provider: string): ApiError {
  return builtInKind(provider) === undefined
    ? new ApiError('oauth_provider_unknown', `No provider ${provider} in this project.`, { param: 'provider' })
    : new ApiError(
        'oauth_provider_not_configured',
        `${provider} is not configured in this project: PUT /v1/auth/providers/${provider} first.`,
        {
          param: 'provider',
        },
      );
}

function withOpenId(kind: ProviderKind, scopes: readonly string[]): string[] {
  return isOpenIdConnect(kind) && !scopes.includes('openid') ? ['openid', ...scopes] : [...scopes];
}

function toProvider(row: store.ProviderRow): Provider {
  return {
    object: 'oauth_provider',
    provider: row.provider,
    kind: row.kind,
    client_id: row.client_id,
    issuer: row.issuer,
    scopes: JSON.parse(row.scopes) as string[],
    redirect_uris: JSON.parse(row.redirect_uris) as string[],
    apple: row.apple_team_id !== null && row.apple_key_id !== null ? { team_id: row.apple_team_id, key_id: row.apple_key_id } : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
