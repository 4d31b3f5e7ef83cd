import { join } from 'node:path';
import { createService } from '../main.js';
import { createUser, walletsClient } from '../modules/wallets/wallets.fixtures.js';
import { testConfig } from './database.js';

/**
 * For tests that run `svc serve` or the CLI on a SQLite database in DATA_DIR (test/serve-process.ts):
 * the processes' environment, and a project with one wallet made beforehand in this process.
 */

/** The environment of a `svc` process on `dataDir`, with a fixed keyring so that a copy of the database opens elsewhere. */
export function sqliteServeEnv(dataDir: string, secretsKey: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    NODE_ENV: 'test',
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'fatal',
    RATE_LIMIT_KEY_PER_SECOND: '0',
    RATE_LIMIT_IP_PER_SECOND: '0',
    SECRETS_ENCRYPTION_KEYS: `k1:${secretsKey}`,
    ...extra,
  };
}

/** Migrates `DATA_DIR/svc.sqlite` and makes a project with one wallet, then closes the database. */
export async function projectWithWallet(options: {
  dataDir: string;
  secretsKey: string;
  name: string;
}): Promise<{ secretKey: string; walletId: string }> {
  const service = await createService(
    testConfig(`sqlite:${join(options.dataDir, 'svc.sqlite')}`, {
      DATA_DIR: options.dataDir,
      SECRETS_ENCRYPTION_KEYS: `k1:${options.secretsKey}`,
    }),
  );
  try {
    const project = await service.projects.createProject({ name: options.name });
    const client = await walletsClient(service, { projectId: project.project.id, secretKey: project.secretKey });
    const userId = await createUser(service, project.project.id);
    return { secretKey: project.secretKey, walletId: (await client.createWallet({ user_id: userId })).id };
  } finally {
    await service.close();
  }
}
