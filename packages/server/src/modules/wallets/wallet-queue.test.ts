import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { WalletQueue } from './wallet-queue.js';

/** A piece of work that records when it starts and ends, and ends when told to. */
function gate(log: string[], name: string) {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    open,
    work: async () => {
      log.push(`start ${name}`);
      await opened;
      log.push(`end ${name}`);
      return name;
    },
  };
}

describe('WalletQueue', () => {
  it('runs at most perWalletMax movements of one wallet at once, the others in arrival order', async () => {
    const queue = new WalletQueue({ perWalletMax: 2 });
    const log: string[] = [];
    const gates = ['a', 'b', 'c', 'd'].map((name) => gate(log, name));
    const runs = gates.map((g) => queue.run(['wlt_hot'], g.work));
    await sleep(1);
    expect(log).toEqual(['start a', 'start b']);
    gates[1]?.open();
    await sleep(1);
    expect(log).toEqual(['start a', 'start b', 'end b', 'start c']);
    for (const g of gates) g.open();
    expect(await Promise.all(runs)).toEqual(['a', 'b', 'c', 'd']);
    expect(queue.busyWallets).toBe(0);
  });

  it('keeps movements of different wallets apart', async () => {
    const queue = new WalletQueue({ perWalletMax: 1 });
    const log: string[] = [];
    const first = gate(log, 'first');
    const second = gate(log, 'second');
    const runs = [queue.run(['wlt_a'], first.work), queue.run(['wlt_b'], second.work)];
    await sleep(1);
    expect(log).toEqual(['start first', 'start second']);
    second.open();
    first.open();
    await Promise.all(runs);
  });

  it('lets transfers in opposite directions through one after the other, never waiting for each other', async () => {
    const queue = new WalletQueue({ perWalletMax: 1 });
    const log: string[] = [];
    const blocker = gate(log, 'credit a');
    const there = gate(log, 'a to b');
    const back = gate(log, 'b to a');
    const runs = [queue.run(['wlt_a'], blocker.work), queue.run(['wlt_a', 'wlt_b'], there.work), queue.run(['wlt_b', 'wlt_a'], back.work)];
    await sleep(1);
    // "b to a" arrived after "a to b", so it waits in both lines even though wallet b is free.
    expect(log).toEqual(['start credit a']);
    for (const g of [blocker, there, back]) g.open();
    await Promise.all(runs);
    expect(log).toEqual(['start credit a', 'end credit a', 'start a to b', 'end a to b', 'start b to a', 'end b to a']);
    expect(queue.busyWallets).toBe(0);
  });

  it('frees the place of a movement that failed', async () => {
    const queue = new WalletQueue({ perWalletMax: 1 });
    await expect(queue.run(['wlt_a'], () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await queue.run(['wlt_a'], () => Promise.resolve('next'))).toBe('next');
    expect(queue.busyWallets).toBe(0);
  });
});
