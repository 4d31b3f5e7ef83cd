import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';

/** A group commit whose flushes are recorded and finish when told to. */
function recording(options: { weightMax: number; concurrency: number }) {
  const flushes: number[][] = [];
  const finish: (() => void)[] = [];
  const groupCommit = new GroupCommit<number, string>({
    ...options,
    weight: (item) => item,
    flush: async (items) => {
      flushes.push([...items]);
      await new Promise<void>((resolve) => finish.push(resolve));
      if (items.includes(13)) throw new Error('unlucky');
      return items.map((item) => `done ${item}`);
    },
  });
  const settle = async () => {
    for (let turn = 0; turn < 20; turn += 1) {
      await new Promise((resolve) => setImmediate(resolve));
      finish.splice(0).forEach((done) => done());
    }
  };
  return { groupCommit, flushes, settle };
}

describe('GroupCommit', () => {
  it('gives the items of one turn one flush, and each caller its own outcome', async () => {
    const { groupCommit, flushes, settle } = recording({ weightMax: 100, concurrency: 1 });
    const outcomes = Promise.all([1, 2, 3].map((item) => groupCommit.run(item)));
    await settle();
    expect(await outcomes).toEqual(['done 1', 'done 2', 'done 3']);
    expect(flushes).toEqual([[1, 2, 3]]);
    expect(groupCommit.busy).toBe(false);
  });

  it('queues what arrives during a flush for the next one, up to the weight, always at least one item', async () => {
    const { groupCommit, flushes, settle } = recording({ weightMax: 5, concurrency: 1 });
    const first = groupCommit.run(1);
    await new Promise((resolve) => setImmediate(resolve));
    const rest = [4, 2, 9].map((item) => groupCommit.run(item));
    await settle();
    await Promise.all([first, ...rest]);
    expect(flushes).toEqual([[1], [4], [2], [9]]);
  });

  it('runs up to `concurrency` flushes at once', async () => {
    const { groupCommit, flushes, settle } = recording({ weightMax: 1, concurrency: 2 });
    const outcomes = Promise.all([1, 1, 1].map((item) => groupCommit.run(item)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(flushes).toHaveLength(2);
    await settle();
    await outcomes;
    expect(flushes).toHaveLength(3);
  });

  it('fails every item of a failed flush, and only those', async () => {
    const { groupCommit, settle } = recording({ weightMax: 20, concurrency: 1 });
    const failed = Promise.allSettled([groupCommit.run(13), groupCommit.run(1)]);
    await new Promise((resolve) => setImmediate(resolve));
    const later = groupCommit.run(2);
    await settle();
    expect((await failed).map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(await later).toBe('done 2');
  });
});
