import { afterAll, beforeAll } from 'vitest';
import type { Dialect } from '../db/database.js';
import { createService, type Service, type ServiceOptions } from '../main.js';
import { testConfig, useTestDatabase } from './database.js';

export interface TestService {
  readonly service: Service;
  /** A project made for this file, with its first secret key. */
  readonly projectId: string;
  readonly secretKey: string;
  /** `Authorization: Bearer <secretKey>`. */
  readonly auth: { readonly authorization: string };
}

/**
 * A whole service (app, database, modules) on a fresh database for the enclosing describe block,
 * with rate limits off unless `env` turns them on. Requests go through `service.app.inject()`.
 */
export function useTestService(
  dialect: Dialect,
  options: { env?: Readonly<Record<string, string>>; serviceOptions?: ServiceOptions } = {},
): () => TestService {
  const database = useTestDatabase(dialect);
  let current: TestService | undefined;
  beforeAll(async () => {
    const config = testConfig(database().url, { RATE_LIMIT_KEY_PER_SECOND: '0', RATE_LIMIT_IP_PER_SECOND: '0', ...options.env });
    const service = await createService(config, options.serviceOptions);
    const { project, secretKey } = await service.projects.createProject({ name: 'Test project' });
    current = { service, projectId: project.id, secretKey, auth: { authorization: `Bearer ${secretKey}` } };
  });
  afterAll(async () => {
    await current?.service.close();
  });
  return () => {
    if (current === undefined) throw new Error('the test service exists only inside tests');
    return current;
  };
}
