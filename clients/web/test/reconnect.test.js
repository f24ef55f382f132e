// How the JavaScript client comes back to a server it lost (protocol.md §17.3), read from the waits
// it asks for (an injected `sleep` that records and returns at once, an injected draw): failures
// in a row wait a draw of 0…1 s, 0…2 s, 0…4 s, … up to 0…60 s; the count starts again once the device is
// live (a stream delivered `ready`); a device that was live comes back with one request; a stream the
// server ended reopens within the base; `503` with `Retry-After` is waited as told.

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
  if (!skip) server = await startServer(['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7']);
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

/**
 * Unreachable for eight attempts; then the round completes and the live stream opens — and its
 * connection drops, after `event: ready` (`began`) or before it. The wait after that.
 */
async function ninthWait(name, began) {
  let down = true;
  const waits = [];
  let device_;
  const fetch = async (url, init = {}) => {
    if (down) throw new TypeError('fetch failed');
    if (!String(url).includes('/v1/live')) return globalThis.fetch(url, init);
    const cursor = device_.replica.progress.pullCursor;
    const body = new ReadableStream({
      start(controller) {
        if (began) controller.enqueue(new TextEncoder().encode(`event: ready\ndata: ${JSON.stringify({ cursor, catalog: null })}\n\n`));
        setTimeout(() => controller.error(new TypeError('terminated')), 5);
      },
    });
    return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
  };
  const sleep = async (ms) => {
    waits.push(ms);
    if (waits.length === 8) down = false;
    if (waits.length === 9) device_.client.stop();
  };
  device_ = await device(name, fetch, { sleep, random: () => 0.25 });
  await device_.client.run();
  assert.equal(device_.replica.progress.hasSynced, true);
  return waits;
}

test('failures in a row double the range up to the maximum; a stream that began starts it again', { skip }, async () => {
  // A quarter (the draw) of a ceiling that doubles up to 60 s but is never above what was already
  // waited (or the base); a quarter of 1 s once a stream delivered `ready`.
  assert.deepEqual(await ninthWait('r1', true), [250, 250, 250, 250, 250, 312.5, 390.625, 488.28125, 250]);
});

test('a completed round whose stream fails before ready does not start the count again', { skip }, async () => {
  // Pulls succeed while streams fail: the device is not live, so it keeps backing off (the ninth
  // ceiling is what was waited so far, 2441.40625 ms).
  assert.deepEqual(await ninthWait('r4', false), [250, 250, 250, 250, 250, 312.5, 390.625, 488.28125, 610.3515625]);
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

/**
 * A device that was live loses its stream (the connection cut after `ready`), waits, and comes back;
 * `duringTheWait` runs while it waits. The requests it sent after the cut.
 */
async function comeback(name, duringTheWait = async () => {}) {
  const sent = [];
  let streams = 0;
  let phone;
  const fetch = async (url, init = {}) => {
    const path = new URL(String(url)).pathname;
    sent.push(`${init.method ?? 'GET'} ${path}`);
    if (path !== '/v1/live') return globalThis.fetch(url, init);
    streams += 1;
    if (streams === 1) {
      const cursor = phone.replica.progress.pullCursor;
      const body = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(`event: ready\ndata: ${JSON.stringify({ cursor, catalog: null })}\n\n`));
          setTimeout(() => controller.error(new TypeError('terminated')), 5);
        },
      });
      return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
    }
    setTimeout(() => phone.client.stop(), 50);
    return globalThis.fetch(url, init);
  };
  let cut = -1;
  const sleep = async () => {
    cut = sent.length;
    await duringTheWait(phone.replica);
  };
  phone = await device(name, fetch, { sleep });
  await phone.client.run();
  return sent.slice(cut);
}

test('a device that was live comes back with one request: its stream at its cursor', { skip }, async () => {
  assert.deepEqual(await comeback('r5'), ['GET /v1/live']);
});

test('a change made while the device was cut off is its only push when it comes back', { skip }, async () => {
  const back = await comeback('r6', (replica) => replica.donate('opened'));
  assert.deepEqual([...back].sort(), ['GET /v1/live', 'POST /v1/push']);
});

test('each failure is one status with its own next attempt', { skip }, async () => {
  // Before, a failure was first `offline` with no next attempt (or the last one's, already past),
  // then the new one: a status that said what was not so, and twice the work per failure.
  const start = 1_800_000_000_000;
  let now = start;
  let down = true;
  const fetch = async (url, init) => {
    if (down) throw new TypeError('fetch failed');
    return globalThis.fetch(url, init);
  };
  const statuses = [];
  let r7;
  const sleep = async (ms) => {
    r7.waits.push(ms);
    now += 10_000; // each wait moves the device's clock on
    if (r7.waits.length === 3) down = false;
  };
  r7 = await device('r7', fetch, { sleep });
  r7.replica.physicalNow = () => now;
  r7.client.onStatus((status) => {
    statuses.push(status);
    if (status.state === 'connected') r7.client.stop();
  });
  await r7.client.run();
  // Up to `connected`; a status that changed in something else (the round marking the device synced)
  // is not a failure's.
  const failures = statuses
    .slice(0, statuses.findIndex((status) => status.state === 'connected'))
    .filter((status, index, all) => index === 0 || status.state !== all[index - 1].state || status.nextAttemptAt !== all[index - 1].nextAttemptAt);
  assert.deepEqual(r7.waits, [1000, 1000, 2000]);
  assert.deepEqual(failures.map((status) => status.state), ['offline', 'offline', 'offline']);
  // The first at the start, then each 10 s later (the waits before it), plus its own wait.
  assert.deepEqual(failures.map((status) => status.nextAttemptAt), [start + 1000, start + 11_000, start + 22_000]);
  assert.equal(statuses.find((status) => status.state === 'connected').nextAttemptAt, null);
});
