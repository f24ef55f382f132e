// The app's face stays small (issue 75): `@tipsync/web` exports the list written in README.md
// ("Public API"), nothing more; the protocol's core is `@tipsync/web/core`, which still exports every
// name the package exported before the split, so tools and other implementations lose nothing.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import * as app from '../src/index.js';
import * as core from '../src/core.js';

const here = fileURLToPath(new URL('.', import.meta.url));

/** The names an app uses: change this list and README.md's together, on purpose. */
const PUBLIC = [
  'CatalogError', 'ChangeError', 'IndexedDBStore', 'MemoryStore', 'Replica', 'SyncClient', 'SyncError', 'TipSync',
  'configure', 'defaultTipSync', 'imageSource', 'isImageReference', 'localized', 'parseCatalog',
];

test('@tipsync/web exports the written list and nothing else', () => {
  assert.deepEqual(Object.keys(app).sort(), [...PUBLIC].sort());
});

test('README.md\'s Public API names every export', () => {
  const readme = readFileSync(join(here, '../README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Public API'), readme.indexOf('## How it keeps its promises'));
  for (const name of PUBLIC) assert.ok(section.includes(`\`${name}\``), `${name} is not in README.md's Public API`);
});

test('the browser entry is the app\'s list plus the element', () => {
  // (It defines a custom element, so it loads only in a browser: read, not imported.)
  const exports = readFileSync(join(here, '../src/browser.js'), 'utf8').split('\n').filter((line) => line.startsWith('export'));
  assert.deepEqual(exports, ["export * from './index.js';", "export { TipSyncTipElement, defineTipElement } from './element.js';"]);
});

test('@tipsync/web/core holds the app\'s names and the protocol\'s core', () => {
  for (const name of PUBLIC) assert.equal(core[name], app[name], name);
  for (const name of ['canonicalText', 'parse', 'HybridLogicalClock', 'ReplicaState', 'StatusEvaluator', 'bucket', 'canonicalLocale', 'superseded']) {
    assert.equal(typeof core[name], 'function', name);
  }
});
