import { execFile } from 'node:child_process';
import { accessSync, appendFileSync, chownSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './serve-process.js';

/**
 * PostgreSQL clusters of a test's own, in temporary directories on free loopback ports: a primary
 * and a streaming standby made from it with `pg_basebackup -R`, for the tests that kill a database
 * host. The servers run as the `postgres` OS user when the tests run as root (PostgreSQL refuses
 * root), through `runuser`.
 */

/** Where PostgreSQL 15's server programs are installed (Debian's layout). */
export const POSTGRES_BIN = '/usr/lib/postgresql/15/bin';

/** Why clusters of a test's own cannot be made on this machine, or undefined when they can. */
export function clusterUnavailableReason(): string | undefined {
  for (const program of ['initdb', 'pg_ctl', 'pg_basebackup']) {
    try {
      accessSync(join(POSTGRES_BIN, program), constants.X_OK);
    } catch {
      return `${join(POSTGRES_BIN, program)} is not installed`;
    }
  }
  return undefined;
}

const run = promisify(execFile);

/** How long a server may take to start, stop or be promoted. */
const SERVER_WAIT_SECONDS = 30;

export interface Cluster {
  readonly directory: string;
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/<database>`. */
  url(database: string): string;
}

export class Clusters {
  readonly #directories: string[] = [];
  readonly #running = new Set<Cluster>();
  #owner: { uid: number; gid: number } | undefined;

  /** A new primary, running, that streams to standbys and waits for one of them on every commit. */
  async primary(): Promise<Cluster> {
    const cluster = await this.#newCluster();
    await this.#as([join(POSTGRES_BIN, 'initdb'), '-D', cluster.directory, '-U', 'postgres', '--auth=trust', '--no-sync']);
    appendFileSync(
      join(cluster.directory, 'postgresql.conf'),
      [
        ...serverSettings(cluster),
        'wal_level = replica',
        'max_wal_senders = 4',
        // Every commit waits until a standby has written it: no acknowledged write is lost when
        // the primary is lost (docs/operations.md, "The standby and a failover, step by step").
        "synchronous_standby_names = '*'",
        'synchronous_commit = on',
      ].join('\n') + '\n',
    );
    await this.start(cluster);
    return cluster;
  }

  /**
   * A streaming standby of `primary`, running. It waits for no standby of its own once promoted:
   * there is none left to wait for.
   */
  async standby(primary: Cluster): Promise<Cluster> {
    const cluster = await this.#newCluster();
    rmSync(cluster.directory, { recursive: true, force: true });
    await this.#as([
      join(POSTGRES_BIN, 'pg_basebackup'),
      ...['-D', cluster.directory, '-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres'],
      ...['-R', '-X', 'stream', '-c', 'fast', '--no-sync'],
    ]);
    appendFileSync(
      join(cluster.directory, 'postgresql.auto.conf'),
      [...serverSettings(cluster), "synchronous_standby_names = ''"].join('\n') + '\n',
    );
    await this.start(cluster);
    return cluster;
  }

  async start(cluster: Cluster): Promise<void> {
    await this.#as([
      join(POSTGRES_BIN, 'pg_ctl'),
      ...['-D', cluster.directory, '-l', join(cluster.directory, 'server.log'), '-w', '-t', String(SERVER_WAIT_SECONDS), 'start'],
    ]);
    this.#running.add(cluster);
  }

  /** `pg_ctl stop -m immediate`: the server ends at once, as in a crash, without a checkpoint. */
  async kill(cluster: Cluster): Promise<void> {
    await this.#as([join(POSTGRES_BIN, 'pg_ctl'), '-D', cluster.directory, '-m', 'immediate', '-w', 'stop']);
    this.#running.delete(cluster);
  }

  /** `pg_ctl promote`, returning once the standby takes writes. */
  async promote(cluster: Cluster): Promise<void> {
    await this.#as([join(POSTGRES_BIN, 'pg_ctl'), '-D', cluster.directory, '-w', '-t', String(SERVER_WAIT_SECONDS), 'promote']);
  }

  /** Stops every server still running and removes every directory, whatever failed before. */
  async removeAll(): Promise<void> {
    for (const cluster of [...this.#running]) await this.kill(cluster).catch(() => undefined);
    for (const directory of this.#directories) rmSync(directory, { recursive: true, force: true });
  }

  async #newCluster(): Promise<Cluster> {
    const parent = mkdtempSync(join(tmpdir(), 'svc-pg-'));
    this.#directories.push(parent);
    const owner = await this.#serverOwner();
    if (owner !== undefined) chownSync(parent, owner.uid, owner.gid);
    const directory = join(parent, 'data');
    const port = await freePort();
    return { directory, port, url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}` };
  }

  /** The `postgres` user when running as root, else undefined (the servers run as this user). */
  async #serverOwner(): Promise<{ uid: number; gid: number } | undefined> {
    if (process.getuid?.() !== 0) return undefined;
    if (this.#owner === undefined) {
      const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
      const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
      this.#owner = { uid, gid };
    }
    return this.#owner;
  }

  async #as(command: readonly string[]): Promise<void> {
    const [program, ...args] = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...command] : command;
    try {
      await run(program!, args, { cwd: tmpdir(), timeout: (SERVER_WAIT_SECONDS + 5) * 1000 });
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      throw new Error(`${command.join(' ')} failed: ${stderr ?? ''}${stdout ?? ''}`, { cause: error });
    }
  }
}

function serverSettings(cluster: Cluster): string[] {
  return [
    "listen_addresses = '127.0.0.1'",
    `port = ${cluster.port}`,
    `unix_socket_directories = '${join(cluster.directory, '..')}'`,
    'max_connections = 60',
    'shared_buffers = 32MB',
  ];
}
