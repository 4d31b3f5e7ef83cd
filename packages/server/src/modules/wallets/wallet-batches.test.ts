import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { type BatchOutcome, WalletBatches } from './wallet-batches.js';

/** A batcher whose flushes are recorded and finish when told to. */
function recordingBatches() {
  const flushes: { walletId: string; items: readonly number[]; finish: () => void }[] = [];
  const batches = new WalletBatches<number, string>({
    batchSizeMax: 3,
    flush: ({ walletId }, items) =>
      new Promise<BatchOutcome<string>[]>((resolve) => {
        flushes.push({
          walletId,
          items,
          finish: () =>
            resolve(
              items.map((item) =>
                item < 0 ? { ok: false, error: new Error(`refused ${item}`) } : { ok: true, value: `${walletId}:${item}` },
              ),
            ),
        });
      }),
  });
  return { batches, flushes };
}

describe('WalletBatches', () => {
  it('flushes what arrived in one turn together, and what arrives meanwhile in the next batch, at most batchSizeMax each', async () => {
    const { batches, flushes } = recordingBatches();
    const first = [1, 2].map((item) => batches.run({ projectId: 'prj_a', walletId: 'wlt_hot' }, item));
    await sleep(1);
    expect(flushes.map((flush) => flush.items)).toEqual([[1, 2]]);
    const later = [3, 4, 5, 6].map((item) => batches.run({ projectId: 'prj_a', walletId: 'wlt_hot' }, item));
    await sleep(1);
    expect(flushes).toHaveLength(1);
    flushes[0]?.finish();
    expect(await Promise.all(first)).toEqual(['wlt_hot:1', 'wlt_hot:2']);
    await sleep(1);
    expect(flushes.map((flush) => flush.items)).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    flushes[1]?.finish();
    await sleep(1);
    flushes[2]?.finish();
    expect(await Promise.all(later)).toEqual(['wlt_hot:3', 'wlt_hot:4', 'wlt_hot:5', 'wlt_hot:6']);
    expect(batches.busyWallets).toBe(0);
  });

  it('runs the batches of different wallets side by side and answers each item its own outcome', async () => {
    const { batches, flushes } = recordingBatches();
    const a = batches.run({ projectId: 'prj_a', walletId: 'wlt_a' }, 1);
    const refused = batches.run({ projectId: 'prj_a', walletId: 'wlt_b' }, -1);
    await sleep(1);
    expect(flushes.map((flush) => flush.walletId)).toEqual(['wlt_a', 'wlt_b']);
    for (const flush of flushes) flush.finish();
    expect(await a).toBe('wlt_a:1');
    await expect(refused).rejects.toThrow('refused -1');
  });

  it('never puts two projects in one batch, even on one wallet id (issue 19: a mixed group failed whole with a 500)', async () => {
    const { batches, flushes } = recordingBatches();
    const owner = batches.run({ projectId: 'prj_owner', walletId: 'wlt_shared' }, 1);
    const stranger = batches.run({ projectId: 'prj_stranger', walletId: 'wlt_shared' }, -1);
    await sleep(1);
    expect(flushes.map((flush) => flush.items)).toEqual([[1], [-1]]);
    for (const flush of flushes) flush.finish();
    expect(await owner).toBe('wlt_shared:1');
    await expect(stranger).rejects.toThrow('refused -1');
  });

  it('fails every item of a batch whose flush throws, and goes on with the next', async () => {
    let calls = 0;
    const batches = new WalletBatches<number, number>({
      batchSizeMax: 10,
      flush: (_line, items) => {
        calls += 1;
        return calls === 1 ? Promise.reject(new Error('database gone')) : Promise.resolve(items.map((item) => ({ ok: true, value: item })));
      },
    });
    const failed = [1, 2].map((item) => batches.run({ projectId: 'prj_a', walletId: 'wlt_a' }, item));
    await expect(Promise.all(failed)).rejects.toThrow('database gone');
    expect(await batches.run({ projectId: 'prj_a', walletId: 'wlt_a' }, 3)).toBe(3);
  });
});
