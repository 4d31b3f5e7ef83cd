import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
    const started = performance.now();
    expect(loadDashboardFiles(join(root, 'dist')).index).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(100);
  });

  it('waits for a build between its two renames (dist/ gone, the old build set aside) and reads the new one', async () => {
    const root = mkdtempSync(join(tmpdir(), 'svc-dashboard-'));
    roots.push(root);
    build(root, 'dist-old-1');
    build(root, 'dist-next-1');
    // Another process finishes the publish 50 ms from now, while this one is loading.
    const publisher = spawn('sh', ['-c', 'sleep 0.05 && mv "$0" "$1"', join(root, 'dist-next-1'), join(root, 'dist')]);
    const exited = new Promise((resolve) => publisher.once('exit', resolve));
    const loaded = loadDashboardFiles(join(root, 'dist'));
    await exited;
    expect(loaded.index?.body.toString()).toContain('<title>dist-next-1</title>');
  });
});
