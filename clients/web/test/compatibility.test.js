// An app shipped today runs for years against later servers (protocol.md §18). Each JavaScript client
// as released at an earlier protocol revision (releases.json: 2.1, 2.4, 2.7), loaded from git history,
// syncs with today's server beside today's client: a dismissal made on any of them reaches every
// other, and a server catalog with members they do not know (experiments, variants, platforms,
// localizations, targeting, platform settings) still works for the tips they do know.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as today from '../src/index.js';
import { serverBinary, startServer } from './server.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const repository = join(here, '../../..');
const { releases } = JSON.parse(readFileSync(join(here, '../releases.json'), 'utf8'));

/**
 * The client's sources as released at `commit`, written to a fresh directory and imported. A clone
 * without that history (a shallow one) is told how to get it rather than skipping the test.
 */
async function released({ revision, commit }, directory) {
  const git = (args, options = {}) => execFileSync('git', ['-C', repository, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  try {
    git(['cat-file', '-e', `${commit}^{commit}`]);
  } catch {
    try {
      git(['fetch', '--quiet', '--unshallow']);
    } catch {
      // Not shallow, or no remote to deepen from: the check below says what is missing.
    }
  }
  try {
    git(['cat-file', '-e', `${commit}^{commit}`]);
  } catch {
    throw new Error(`the client released at protocol revision ${revision} (${commit}) is not in this clone's history; clone with full history (git fetch --unshallow)`);
  }
  const archive = git(['archive', '--format=tar', commit, 'clients/web/src'], { maxBuffer: 64 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', directory], { input: archive });
  return import(pathToFileURL(join(directory, 'clients/web/src/index.js')).href);
}

/** What every device loads, and what the server serves: members no 2.1 client knows among them. */
const catalog = {
  events: [{ id: 'opened' }],
  parameters: [{ id: 'plan', default: 'free' }],
  tips: [
    { id: 'plain', title: 'Plain' },
    { id: 'ruled', title: 'Pro', rules: [{ '==': [{ param: 'plan' }, 'pro'] }] },
    { id: 'localized', title: 'Hello', localizations: { fr: { title: 'Bonjour' } } },
    { id: 'targeted', title: 'Web', targeting: [{ '==': [{ context: 'platform' }, 'web'] }] },
    { id: 'ios-only', title: 'iOS', platforms: ['ios'] },
    { id: 'tested', title: 'Tested', experiment: { id: 'exp', holdout: 0.01, goal: { event: 'opened' }, variants: [{ id: 'v1', title: 'V1' }] } },
  ],
  platformSettings: { ios: { displayFrequency: 'daily' } },
};

/** The devices: one per released client and one for today's, each with a tip of its own to dismiss. */
const devices = [...releases.map(({ revision }) => ({ revision, name: `web-${revision}` })), { revision: 'today', name: 'web-today' }];
const dismissible = devices.map(({ name }) => ({ id: `dismiss-${name}`, title: name }));

test('clients released at earlier revisions sync with today\'s server and today\'s client (protocol.md §18)', { skip: !serverBinary && 'TIPSYNC_SERVER_BIN is not set' }, async () => {
  const directory = mkdtempSync(join(tmpdir(), 'tipsync-releases-'));
  const server = await startServer(devices.map(({ name }) => name));
  try {
    // The operators' catalog, with every member later revisions added.
    const served = { ...catalog, tips: [...catalog.tips, ...dismissible] };
    const upload = await fetch(`${server.url}/admin/v1/catalog`, {
      method: 'PUT', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify(served),
    });
    assert.equal(upload.status, 200, await upload.text());

    const clients = [];
    for (const device of devices) {
      const module = device.revision === 'today'
        ? today
        : await released(releases.find((release) => release.revision === device.revision), mkdtempSync(join(directory, `${device.revision}-`)));
      // Each loads the app's bundled catalog (the dismissible tips only) and follows the server's.
      const replica = await module.Replica.open({ device: device.name, store: new module.MemoryStore(), catalog: module.parseCatalog({ tips: dismissible }) });
      const client = new module.SyncClient(replica, {
        server: server.url, token: server.tokens[device.name], followsServerCatalog: true, live: false, compressPushes: false,
        sleep: async () => {},
      });
      clients.push({ ...device, replica, client });
    }

    // First sync: every client applies the served catalog, members it does not know included.
    for (const { name, client } of clients) await client.syncOnce().catch((error) => assert.fail(`${name}: ${error.message}`));
    for (const { name, replica, client } of clients) {
      assert.equal(client.refusedCatalogTag, null, `${name} refused the served catalog`);
      assert.ok(replica.tip('plain'), `${name} applied the served catalog`);
      assert.equal(replica.status('plain'), 'available', `${name}: a tip it knows works`);
      assert.equal(replica.status('ruled'), 'pending', `${name}: rules it knows work`);
    }

    // Each dismisses its own tip and sets a parameter; every other, after one more round, sees all.
    for (const { name, replica } of clients) await replica.invalidate(`dismiss-${name}`, 'tipClosed');
    await clients[0].replica.setParameter('plan', 'pro');
    for (const { client } of clients) await client.syncOnce();
    for (const { client } of clients) await client.syncOnce();
    for (const reader of clients) {
      for (const writer of clients) {
        assert.equal(reader.replica.status(`dismiss-${writer.name}`), 'invalidated:tipClosed', `${writer.name}'s dismissal on ${reader.name}`);
      }
      assert.equal(reader.replica.status('ruled'), 'available', `${clients[0].name}'s parameter on ${reader.name}`);
    }

    // What each revision's text says of members it does not know (protocol.md §13.11, §13.12): a
    // client before 2.4 shows a platform's tip everywhere; before 2.5 it holds nobody out.
    for (const { name, revision, replica } of clients) {
      const before = (version) => revision !== 'today' && Number(revision.split('.')[1]) < Number(version.split('.')[1]);
      const iosOnly = replica.tip('ios-only') ? replica.status('ios-only') : null;
      assert.equal(iosOnly, before('2.4') ? 'available' : null, `${name}: a tip for iOS alone`);
      assert.equal(replica.status('localized'), 'available', `${name}: a localized tip`);
      assert.equal(replica.status('tested'), 'available', `${name}: a tip with an experiment (the account is outside a 0.01% holdout)`);
    }

    // A rule expression added at 2.4, in `rules`: a reader older than 2.4 refuses the served catalog,
    // keeps the one it has and syncs on (§18); later ones apply it.
    const next = { ...served, tips: [...served.tips, { id: 'web-rule', title: 'Web', rules: [{ '==': [{ context: 'platform' }, 'web'] }] }] };
    const second = await fetch(`${server.url}/admin/v1/catalog`, {
      method: 'PUT', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify(next),
    });
    assert.equal(second.status, 200, await second.text());
    await clients.at(-1).replica.resetEligibility(`dismiss-${clients.at(-1).name}`);
    for (const { client } of clients) await client.syncOnce();
    for (const { client } of clients) await client.syncOnce();
    for (const { name, revision, replica, client } of clients) {
      const older = revision === '2.1';
      assert.equal(client.refusedCatalogTag !== null, older, `${name}: the catalog with {"context"} in rules`);
      assert.equal(Boolean(replica.tip('web-rule')), !older, `${name}: applies the catalog with {"context"} in rules`);
      assert.equal(replica.status('plain'), 'available', `${name}: keeps showing the tips it knows`);
      assert.equal(replica.status(`dismiss-${clients.at(-1).name}`), 'available', `${name}: today's reset reaches it`);
    }
  } finally {
    await server.stop();
    rmSync(directory, { recursive: true, force: true });
  }
});

test('each release is the last commit of its revision, and each revision has a CHANGELOG entry', { skip: !serverBinary && 'TIPSYNC_SERVER_BIN is not set' }, () => {
  const revisionsIn = (text) => [...text.matchAll(/^Revision (2\.\d+) /gm)].map((match) => match[1]);
  const latest = (revisions) => revisions.sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1])).at(-1);
  for (const { revision, commit } of releases) {
    const document = execFileSync('git', ['-C', repository, 'show', `${commit}:protocol.md`], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    assert.equal(latest(revisionsIn(document)), revision, `${commit}'s protocol.md`);
  }
  const changelog = readFileSync(join(repository, 'CHANGELOG.md'), 'utf8');
  const entries = [...changelog.matchAll(/^## (2\.\d+) /gm)].map((match) => match[1]);
  const revisions = ['2.1', ...revisionsIn(readFileSync(join(repository, 'protocol.md'), 'utf8'))];
  assert.deepEqual([...new Set(revisions)].sort(), [...entries].sort());
});
