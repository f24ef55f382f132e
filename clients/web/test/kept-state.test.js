// Issue 77, item 7: the server keeps a compacted account's state as compressed pages for new devices,
// but only answers pulls of `limit=5000` with them; the JavaScript client pulled 1,000 at a time, so a
// new browser read the whole history instead. Its default page is now the protocol's largest (5,000),
// as the Swift client's is, and a new page starts from the kept state.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Replica, SyncClient, MemoryStore, parseCatalog } from '../src/index.js';
import { serverBinary, startServer } from './server.js';

const catalog = parseCatalog({ parameters: [{ id: 'level', default: 0 }], tips: [{ id: 'welcome', title: 'Welcome' }] });
const skip = serverBinary ? false : 'TIPSYNC_SERVER_BIN is not set (swift test sets it)';
let server;
before(async () => {
  if (!skip) server = await startServer(['phone', 'browser', 'other']);
});
after(async () => {
  await server?.stop();
});

async function metric(name) {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

test('a new browser starts from the kept state of a compacted account', { skip }, async () => {
  // A state of 6,000 entries (kept pages are full pages: 5,000 changes, or 512 KiB): 6,000
  // parameters pushed as a device of another client would, then the phone's own changes.
  const now = Date.now();
  for (let batch = 0; batch < 6; batch++) {
    const changes = Array.from({ length: 1000 }, (_, i) => {
      const seq = batch * 1000 + i + 1;
      const hlc = `${now.toString(16).padStart(12, '0')}-${(seq % 65536).toString(16).padStart(4, '0')}`;
      return { device: 'other', seq, hlc, kind: 'parameter', id: `p${seq}`, value: seq };
    });
    const pushed = await fetch(`${server.url}/v1/push`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.tokens.other}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ changes }),
    });
    assert.equal(pushed.status, 200, await pushed.text());
  }
  const phone = await Replica.open({ device: 'phone', catalog, store: new MemoryStore() });
  const phoneClient = new SyncClient(phone, { server: server.url, token: server.tokens.phone });
  for (let level = 1; level <= 30; level++) await phone.setParameter('level', level);
  await phone.invalidate('welcome', 'tipClosed');
  await phoneClient.syncOnce();
  const compacted = await fetch(`${server.url}/admin/v1/accounts/${server.account}/compact`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.adminKey}` },
  });
  assert.equal(compacted.status, 200);

  const before = await metric('tipsync_kept_state_pages_served_total');
  const browser = await Replica.open({ device: 'browser', catalog, store: new MemoryStore() });
  const client = new SyncClient(browser, { server: server.url, token: server.tokens.browser });
  assert.equal(client.pullLimit, 5000);
  await client.syncOnce();
  assert.ok((await metric('tipsync_kept_state_pages_served_total')) > before, 'the first page came from the kept state');
  assert.equal(browser.parameterValue('level'), 30);
  assert.equal(browser.status('welcome'), 'invalidated:tipClosed');
});
