// Packaging (issue 54, item 6): `npm pack` makes a tarball that installs into a project with no
// registry, whose two entry points — `@tipsync/web` and `@tipsync/web/browser` (the <tipsync-tip>
// element) — resolve by package name, each with its types, as a bundler resolves them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const npm = ['/usr/bin/npm', '/usr/local/bin/npm'].find((path) => existsSync(path));

test('npm pack installs offline and both entry points resolve with their types', { skip: !npm && !process.env.TIPSYNC_REQUIRE_BROWSER && 'npm is not installed' }, () => {
  assert.ok(npm, 'npm is missing (.ci/run installs it)');
  const scratch = mkdtempSync(join(tmpdir(), 'tipsync-pack-'));
  const options = { cwd: root, encoding: 'utf8', env: { ...process.env, npm_config_cache: join(scratch, 'cache') } };
  const tarball = execFileSync(npm, ['pack', '--pack-destination', scratch, '--silent'], options).trim().split('\n').pop();
  const project = join(scratch, 'app');
  execFileSync('mkdir', ['-p', project]);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', type: 'module', private: true }));
  execFileSync(npm, ['install', '--offline', '--no-audit', '--no-fund', '--silent', join(scratch, tarball)], { ...options, cwd: project });

  const installed = join(project, 'node_modules/@tipsync/web');
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  for (const [entry, target] of Object.entries(manifest.exports)) {
    if (typeof target === 'string') continue;
    assert.ok(existsSync(join(installed, target.default)), `${entry}: ${target.default}`);
    assert.ok(existsSync(join(installed, target.types)), `${entry}: ${target.types}`);
  }
  assert.ok(manifest.exports['./browser'], 'the element has an entry point');
  // Resolved and loaded by package name from the project, as a bundler (or Node) resolves them.
  const resolved = execFileSync(process.execPath, ['--input-type=module', '-e',
    "console.log(import.meta.resolve('@tipsync/web/browser')); const m = await import('@tipsync/web'); console.log(typeof m.configure, typeof m.imageSource)"],
  { cwd: project, encoding: 'utf8' }).trim().split('\n');
  assert.match(resolved[0], /node_modules\/@tipsync\/web\/src\/browser\.js$/);
  assert.equal(resolved[1], 'function function');
  assert.ok(readFileSync(join(installed, 'types/browser.d.ts'), 'utf8').includes('TipSyncTipElement'));
  // Only what a project needs: the sources and their types, no tests.
  assert.ok(!existsSync(join(installed, 'test')));
});
