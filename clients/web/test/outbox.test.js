// A device offline for a while with large parameter values (issue 72, item 6): its outbox goes in
// pushes of at most 1 MiB (protocol.md §7), a 413 halves them, and a 10 MB outbox drains through a
// real server with default settings — before, one push of 500 such changes was refused 413 forever.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Replica, SyncClient, MemoryStore, parseCatalog } from '../src/index.js';
import { MAX_PUSH_BODY_BYTES, pushBody } from '../src/sync.js';
import { serverBinary, startServer } from './server.js';

const catalog = parseCatalog({ parameters: [{ id: 'note', default: '' }] });

/** A replica holding `count` changes of a parameter value about `bytes` long. */
async function replicaWith(device, count, bytes) {
  const replica = await Replica.open({ device, catalog, store: new MemoryStore() });
  for (let index = 0; index < count; index += 1) await replica.setParameter('note', `${index}:` + 'é'.repeat(bytes / 2));
  return replica;
}

test('a push holds what fits in 1 MiB of UTF-8, never fewer than one change', async () => {
  const replica = await replicaWith('phone', 40, 60_000);
  const { batch, body } = pushBody(replica.outbox(500));
  assert.ok(batch.length > 1 && batch.length < 40, `${batch.length} changes`);
  assert.ok(new TextEncoder().encode(body).length <= MAX_PUSH_BODY_BYTES);
  const { batch: one } = pushBody(replica.outbox(500), 10);
  assert.equal(one.length, 1);
});

test('a 413 halves the pushes until they fit', async () => {
  const replica = await replicaWith('phone', 8, 1000);
  const sizes = [];
  const fetch = async (url, init = {}) => {
    const path = new URL(String(url)).pathname;
    if (path === '/v1/push') {
      const changes = JSON.parse(init.body).changes;
      sizes.push(changes.length);
      if (changes.length > 2) return Response.json({ error: { code: 'batch_too_large', message: 'at most 2' } }, { status: 413 });
      return Response.json({ accepted: changes.length, duplicates: 0, highestSeq: changes[changes.length - 1].seq, serverTime: Date.now() });
    }
    return Response.json({ error: { code: 'not_found', message: 'no' } }, { status: 404 });
  };
  const client = new SyncClient(replica, { server: 'http://x.invalid', token: 't', fetch, compressPushes: false });
  await client.pushAll();
  assert.deepEqual(sizes, [8, 4, 2, 2, 2, 2]);
  assert.equal(replica.progress.pushedSeq, 8);
});

let server = null;
const skip = serverBinary ? false : 'TIPSYNC_SERVER_BIN is not set';
before(async () => { if (serverBinary) server = await startServer(['phone']); });
after(async () => { await server?.stop(); });

test('a 10 MB outbox drains through a server with default settings', { skip }, async () => {
  const replica = await replicaWith('phone', 170, 60_000);
  const waits = [];
  const client = new SyncClient(replica, {
    server: server.url, token: server.tokens.phone,
    // Retry-After (the body budget) is waited for real: the server's clock is real.
    sleep: (ms) => { waits.push(ms); return new Promise((resolve) => setTimeout(resolve, ms)); },
  });
  await client.pushPending();
  assert.equal(replica.progress.pushedSeq, 170);
  // The server holds them all.
  const response = await fetch(`${server.url}/v1/devices/phone`, { headers: { Authorization: `Bearer ${server.tokens.phone}` } });
  assert.equal((await response.json()).highestSeq, 170);
});
