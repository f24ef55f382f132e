// How the JavaScript client comes back to a server it lost (protocol.md §17.3), read from the waits
// it asks for (an injected `sleep` that records and returns at once, an injected draw): failures
// in a row wait a draw of 0…1 s, 0…2 s, 0…4 s, … up to 0…60 s; a completed round starts the count again; a
// stream the server ended reopens within the base; `503` with `Retry-After` is waited as told.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Replica, SyncClient, MemoryStore, parseCatalog } from '../src/index.js';
import { ceiling, delayAfterFailures, delayAfterStreamEnded, retryAfterSeconds } from '../src/backoff.js';
import { serverBinary, startServer } from './server.js';

const catalog = parseCatalog({ events: [{ id: 'opened' }], tips: [{ id: 'search', title: 'Search your yard' }] });

test('the ceiling doubles from the base up to the maximum, and each delay is the draw of it', () => {
  const settings = { base: 1000, maximum: 60_000 };
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 7, 8].map((n) => ceiling(n, settings)), [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
  assert.equal(ceiling(Number.MAX_SAFE_INTEGER, settings), 60_000);
  assert.equal(ceiling(-3, settings), 1000);
  const small = { base: 500, maximum: 10_000 };
  assert.equal(delayAfterFailures(0, 0, small), 0);
  assert.equal(delayAfterFailures(0, 1, small), 500);
  assert.equal(delayAfterFailures(3, 0.25, small), 1000);
  assert.equal(delayAfterFailures(10, 0.5, small), 5000);
  assert.equal(delayAfterFailures(2, 7, small), 2000);
  assert.equal(delayAfterFailures(2, -1, small), 0);
  assert.equal(delayAfterFailures(2, Number.NaN, small), 2000);
  assert.equal(delayAfterStreamEnded(0.25, { base: 2000, maximum: 60_000 }), 500);
  assert.equal(delayAfterStreamEnded(1, { base: 2000, maximum: 60_000 }), 2000);
});

test('Retry-After: whole seconds from 1 to 3600; missing or unreadable is 1', () => {
  assert.equal(retryAfterSeconds('9'), 9);
  assert.equal(retryAfterSeconds(' 12 '), 12);
  assert.equal(retryAfterSeconds(null), 1);
  assert.equal(retryAfterSeconds('0'), 1);
  assert.equal(retryAfterSeconds('-5'), 1);
  assert.equal(retryAfterSeconds('soon'), 1);
  assert.equal(retryAfterSeconds('Fri, 31 Dec 1999 23:59:59 GMT'), 1);
  assert.equal(retryAfterSeconds('99999'), 3600);
});

const skip = serverBinary ? false : 'TIPSYNC_SERVER_BIN is not set (swift test sets it)';
let server;
before(async () => {
  if (!skip) server = await startServer(['r1', 'r2', 'r3']);
});
after(async () => {
  await server?.stop();
});

/** A device whose requests go through `fetch` and whose waits are recorded in `waits` (ms). */
async function device(name, fetch, options = {}) {
  const replica = await Replica.open({ device: name, catalog, store: new MemoryStore() });
  const waits = [];
  const client = new SyncClient(replica, {
    server: server.url, token: server.tokens[name], fetch, random: () => 1,
    sleep: async (ms) => void waits.push(ms), ...options,
  });
  return { replica, client, waits };
}

test('failures in a row double the range up to the maximum; a completed round starts it again', { skip }, async () => {
  let down = true;
  const waits = [];
  let r1;
  // Unreachable for eight attempts; then the round completes, the live stream opens and its
  // connection drops at once: the wait after that is from the base again.
  const fetch = async (url, init = {}) => {
    if (down) throw new TypeError('fetch failed');
    if (!String(url).includes('/v1/live')) return globalThis.fetch(url, init);
    const dropped = new AbortController();
    const response = await globalThis.fetch(url, { ...init, signal: dropped.signal });
    dropped.abort();
    return response;
  };
  const sleep = async (ms) => {
    waits.push(ms);
    if (waits.length === 8) down = false;
    if (waits.length === 9) r1.client.stop();
  };
  r1 = await device('r1', fetch, { sleep, random: () => 0.25 });
  await r1.client.run();
  // A quarter (the draw) of 1, 2, 4, … 60 s; a quarter of 1 s after the round completed.
  // A quarter (the draw) of a ceiling that doubles up to 60 s but is never above what was already
  // waited (or the base); a quarter of 1 s after the round completed.
  assert.deepEqual(waits, [250, 250, 250, 250, 250, 312.5, 390.625, 488.28125, 250]);
  assert.equal(r1.replica.progress.hasSynced, true);
});

test('a stream the server ended reopens after a pause within the base', { skip }, async () => {
  const waits = [];
  let streams = 0;
  let r2;
  // The server's stream begins (`ready`) and ends, as a graceful restart ends it.
  const fetch = async (url, init = {}) => {
    if (!String(url).includes('/v1/live')) return globalThis.fetch(url, init);
    streams += 1;
    if (streams === 2) r2.client.stop();
    const cursor = r2.replica.progress.pullCursor;
    return new Response(`event: ready\ndata: ${JSON.stringify({ cursor })}\n\n`, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
  };
  r2 = await device('r2', fetch, { initialBackoff: 2000, random: () => 0.25, sleep: async (ms) => void waits.push(ms) });
  await r2.client.run();
  assert.deepEqual(waits, [500]);
  assert.equal(streams, 2);
});

test('503 with Retry-After is waited as told, then the same push goes through', { skip }, async () => {
  let answered = false;
  const fetch = async (url, init) => {
    if (!answered && String(url).endsWith('/v1/push')) {
      answered = true;
      return new Response('busy', { status: 503, headers: { 'Retry-After': '9' } });
    }
    return globalThis.fetch(url, init);
  };
  const r3 = await device('r3', fetch);
  await r3.replica.donate('opened');
  await r3.client.syncOnce();
  assert.deepEqual(r3.waits, [9000]);
  assert.equal(r3.replica.progress.pushedSeq, r3.replica.lastLocalSeq);
});
