import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadDashboardFiles } from './dashboard.static.js';

describe('loading the built dashboard', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  function build(root: string, name: string): void {
    mkdirSync(join(root, name, 'assets'), { recursive: true });
    writeFileSync(join(root, name, 'index.html'), `<!doctype html><title>${name}</title>`);
    writeFileSync(join(root, name, 'assets', 'app.js'), 'console.log(1);');
  }

  it('reads index.html and the assets', () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-dashboard-'));
    roots.push(root);
    build(root, 'dist');
    const loaded = loadDashboardFiles(join(root, 'dist'));
    expect(loaded.index?.body.toString()).toContain('<title>dist</title>');
    expect([...loaded.files.keys()]).toEqual(['assets/app.js']);
  });

  it('answers "not built" at once when there is no dist/ and no build being published', () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-dashboard-'));
    roots.push(root);
    // "At once" is "without waiting": the loader reads once and never sleeps for a publish.
    const waits: number[] = [];
    expect(loadDashboardFiles(join(root, 'dist'), { sleep: (milliseconds) => waits.push(milliseconds) }).index).toBeUndefined();
    expect(waits).toEqual([]);
  });

  it('waits for a build between its two renames (dist/ gone, the old build set aside) and reads the new one', () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-dashboard-'));
    roots.push(root);
    build(root, 'dist-old-1');
    build(root, 'dist-next-1');
    // The publisher's second rename happens while the loader waits: during its second wait, so that
    // it has read and found no dist/ twice. Until then it sees only the old build set aside.
    const waits: number[] = [];
    const loaded = loadDashboardFiles(join(root, 'dist'), {
      sleep: (milliseconds) => {
        waits.push(milliseconds);
        if (waits.length === 2) renameSync(join(root, 'dist-next-1'), join(root, 'dist'));
      },
    });
    expect(loaded.index?.body.toString()).toContain('<title>dist-next-1</title>');
    expect(waits).toEqual([10, 10]);
  });

  it('gives up after about half a second of waits when the publish never finishes', () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-dashboard-'));
    roots.push(root);
    build(root, 'dist-old-1');
    const waits: number[] = [];
    expect(loadDashboardFiles(join(root, 'dist'), { sleep: (milliseconds) => waits.push(milliseconds) }).index).toBeUndefined();
    expect(waits.reduce((total, milliseconds) => total + milliseconds, 0)).toBe(490);
  });
});
