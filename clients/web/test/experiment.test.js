// Experiments on a web device (protocol.md §13.12): the holdout never shows the tip, asking whether to
// show it records reach once per account, showing it in the treatment records exposure once; what
// the Swift tests check, in the JavaScript client.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore, Replica, TipSync, localized, parseCatalog } from '../src/index.js';
import { armsOf, contentFor } from '../src/experiment.js';

// carol's bucket for experiment:search-holdout is 2330 (held out at 25%), alice's 7191
// (conformance/catalog/experiments.json).
const catalog = parseCatalog({
  events: [{ id: 'searched' }],
  parameters: [{ id: 'ready', default: true }],
  tips: [{
    id: 'search', title: 'Search', rules: [{ '==': [{ param: 'ready' }, true] }],
    experiment: { id: 'search-holdout', holdout: 25, goal: { event: 'searched' } },
  }],
});

const open = async (account) => {
  const replica = await Replica.open({ device: 'phone', store: new MemoryStore(), catalog });
  if (account) await replica.setAccount(account);
  return replica;
};
const records = (replica, kind) => replica.local.filter((change) => change.kind === 'donation' && change.event === `tipsync.${kind}:search-holdout`);

test('a held-out account never sees the tip and records reach once', async () => {
  const replica = await open('carol');
  assert.equal(replica.status('search'), 'pending');
  assert.deepEqual(replica.explain('search'), { tip: 'search', status: 'pending', reason: 'experiment', experiment: 'search-holdout', arm: 'holdout' });
  assert.equal(replica.reachDue('search'), 'holdout');
  await replica.recordReach('search');
  await replica.recordReach('search');
  assert.equal(records(replica, 'reach').length, 1);
  assert.deepEqual(records(replica, 'reach')[0].info, { arm: 'holdout', tip: 'search' });
  assert.equal(replica.reachDue('search'), null);
});

test('a tip whose rules do not hold has reached nobody; a device without its account holds the tip', async () => {
  const ruled = await open('carol');
  await ruled.setParameter('ready', false);
  assert.equal(ruled.reachDue('search'), null);
  const unknown = await open(null);
  assert.equal(unknown.status('search'), 'pending');
  assert.deepEqual(unknown.explain('search'), { tip: 'search', status: 'pending', reason: 'experiment', experiment: 'search-holdout', arm: null });
  assert.equal(unknown.reachDue('search'), null);
});

test('the treatment shows the tip; a display records reach and exposure once', async () => {
  const replica = await open('alice');
  assert.equal(replica.status('search'), 'available');
  await replica.recordDisplay('search');
  await replica.recordDisplay('search');
  assert.deepEqual(records(replica, 'reach').map((change) => change.seq), [2]);
  assert.deepEqual(records(replica, 'exposure').map((change) => change.seq), [3]);
  assert.equal(replica.local.length, 4);
});

test('a stopped experiment holds nobody out and records nothing', async () => {
  const stopped = parseCatalog({ tips: [{ id: 'search', title: 'Search', experiment: { id: 'search-holdout', holdout: 25, goal: { actionPerformed: true }, stoppedAt: 1 } }] });
  const replica = await Replica.open({ device: 'phone', store: new MemoryStore(), catalog: stopped });
  await replica.setAccount('carol');
  assert.equal(replica.status('search'), 'available');
  await replica.recordDisplay('search');
  assert.equal(replica.local.length, 1);
});

test('a page watching the tip records reach when the holdout takes over from a rule, both pending', async () => {
  const tipsync = await TipSync.configure({ device: 'phone', catalog, storage: 'memory' });
  await tipsync.replica.setAccount('carol');
  await tipsync.setParameter('ready', false);
  const seen = [];
  const stop = tipsync.watch('search', (status) => seen.push(status));
  assert.deepEqual(seen, ['pending']);
  const reached = new Promise((resolve) => {
    const unsubscribe = tipsync.replica.subscribe(() => {
      if (records(tipsync.replica, 'reach').length > 0) {
        unsubscribe();
        resolve();
      }
    });
  });
  await tipsync.setParameter('ready', true);
  await reached;
  assert.deepEqual(seen, ['pending']);
  assert.equal(records(tipsync.replica, 'reach').length, 1);
  stop();
  tipsync.stop();
});

test('a variant account sees its content and records its arm', async () => {
  const variants = parseCatalog({
    events: [{ id: 'searched' }],
    tips: [{
      id: 'search', title: 'Search', message: 'Find yards', localizations: { fr: { title: 'Recherche' } },
      experiment: {
        id: 'search-holdout', holdout: 25, goal: { event: 'searched' },
        variants: [{ id: 'short', title: 'Search!' }, { id: 'long', message: 'Find any yard by its name', localizations: { fr: { message: 'Trouvez un jardin' } } }],
      },
    }],
  });
  const tip = variants.tips[0];
  assert.deepEqual(armsOf(tip.experiment), ['holdout', 'short', 'long']);
  assert.equal(localized(contentFor(tip, 'dave'), 'fr').title, 'Search!');
  assert.equal(localized(contentFor(tip, 'dave'), 'fr').message, 'Find yards');
  assert.equal(localized(contentFor(tip, 'alice'), 'fr').message, 'Trouvez un jardin');
  assert.equal(localized(contentFor(tip, 'alice'), 'fr').title, 'Search');
  assert.equal(contentFor(tip, 'carol'), tip);
  const replica = await Replica.open({ device: 'phone', store: new MemoryStore(), catalog: variants });
  await replica.setAccount('alice');
  await replica.recordDisplay('search');
  assert.deepEqual(records(replica, 'reach')[0].info, { arm: 'long', tip: 'search' });
  assert.deepEqual(records(replica, 'exposure')[0].info, { arm: 'long', tip: 'search' });
});

test('showing a group records the reach of the held-out tip it would have shown', async () => {
  const grouped = parseCatalog({
    events: [{ id: 'searched' }],
    tips: [{ id: 'search', title: 'Search', experiment: { id: 'search-holdout', holdout: 25, goal: { event: 'searched' } } }, { id: 'other', title: 'Other' }],
    groups: [{ id: 'first-run', priority: 'ordered', tips: ['search', 'other'] }],
  });
  const tipsync = await TipSync.configure({ device: 'phone', catalog: grouped, storage: 'memory' });
  await tipsync.replica.setAccount('carol');
  assert.equal(tipsync.replica.groupReachDue('first-run'), 'search');
  const reached = new Promise((resolve) => {
    const unsubscribe = tipsync.replica.subscribe(() => {
      if (records(tipsync.replica, 'reach').length > 0) {
        unsubscribe();
        resolve();
      }
    });
  });
  assert.equal(tipsync.currentTip('first-run'), null);
  await reached;
  assert.equal(records(tipsync.replica, 'reach').length, 1);
  assert.equal(tipsync.replica.groupReachDue('first-run'), null);
  tipsync.stop();
});
