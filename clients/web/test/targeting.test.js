// Targeting and rollout (protocol.md §13.8): the bucket's values are pinned by the conformance
// corpus; these check what a rollout needs of them, as the Swift tests do.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucket } from '../src/bucket.js';

test('a 10% rollout takes 10% ± 1% of 10,000 generated accounts', () => {
  for (const key of ['rollout-10', 'welcome', 'exp:search-tip', 'é']) {
    let inside = 0;
    for (let i = 0; i < 10000; i++) if (bucket(`account-${i}`, key) < 1000) inside++;
    assert.ok(inside >= 900 && inside <= 1100, `${inside} of 10,000 accounts in a 10% rollout of '${key}'`);
  }
});

test('raising the threshold keeps everyone in; another key reshuffles', () => {
  const accounts = Array.from({ length: 10000 }, (_, i) => `user${i}@example.com`);
  const at10 = new Set(accounts.filter((a) => bucket(a, 'search') < 1000));
  const at20 = new Set(accounts.filter((a) => bucket(a, 'search') < 2000));
  const other = accounts.filter((a) => bucket(a, 'favorites') < 1000);
  assert.ok([...at10].every((a) => at20.has(a)));
  assert.ok(at20.size >= 1800 && at20.size <= 2200);
  assert.ok(other.filter((a) => at10.has(a)).length < 300);
});

test('the TipSync-Context header carries platform, version and locale as the Swift client writes it', async () => {
  const { contextHeader } = await import('../src/context.js');
  // The same strings as Tests/TipSyncCoreTests/DeviceContextHeaderTests.swift (protocol.md §5).
  assert.equal(
    contextHeader({ platform: 'ios', appVersion: '2.4.1 (beta)', locale: 'fr-CA', account: 'alice' }),
    'platform=ios; appVersion=2.4.1%20%28beta%29; locale=fr-CA',
  );
  assert.equal(contextHeader({ platform: 'web' }), 'platform=web');
  assert.equal(contextHeader({ account: 'alice' }), null);
  assert.equal(contextHeader({ appVersion: 'é;=' }), 'appVersion=%C3%A9%3B%3D');
});
