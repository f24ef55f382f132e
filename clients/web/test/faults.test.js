// Faults made by others, from a web device's side (issue 72, item 4), against a real server: 30 s of
// 500s, 30 s of 503 with Retry-After, 30 s of connections reset, 30 s of 401 (a server on the wrong
// database). Time is the client's own: its waits move a virtual clock the faults are read from, so
// nothing sleeps. After each, the dismissal made on another device during the fault arrives, and the
// status said what happened while it happened.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Replica, SyncClient, MemoryStore, parseCatalog } from '../src/index.js';
import { serverBinary, startServer } from './server.js';

const catalog = parseCatalog({ tips: [0, 1, 2, 3].map((index) => ({ id: `t${index}`, title: `${index}` })) });
const skip = serverBinary ? false : 'TIPSYNC_SERVER_BIN is not set (swift test sets it)';
let server;
before(async () => { if (!skip) server = await startServer(['phone', 'laptop']); });
after(async () => { await server?.stop(); });

test('a running device syncs again after each fault, and its status says what happened', { skip, timeout: 60_000 }, async () => {
  let now = 0;
  let fault = null;
  let until = 0;
  const fetch = async (url, init = {}) => {
    if (fault && now < until) {
      if (fault === 'reset') throw new TypeError('fetch failed: connection reset');
      const headers = { 'Content-Type': 'application/json', ...(fault.retryAfter ? { 'Retry-After': String(fault.retryAfter) } : {}) };
      return new Response(JSON.stringify({ error: { code: fault.code, message: 'injected fault' } }), { status: fault.status, headers });
    }
    return globalThis.fetch(url, init);
  };
  const open = async (device, options) => {
    const replica = await Replica.open({ device, catalog, store: new MemoryStore() });
    return { replica, client: new SyncClient(replica, { server: server.url, token: server.tokens[device], live: false, longPollSeconds: 1, ...options }) };
  };
  // A wait moves the phone's clock at once, and yields to the event loop so the other device's real
  // requests go on meanwhile.
  const phone = await open('phone', { fetch, sleep: (ms) => { now += ms; return new Promise((resolve) => setImmediate(resolve)); } });
  const laptop = await open('laptop', {});
  let seen = [];
  const checks = new Set();
  phone.client.onStatus((status) => {
    if (seen[seen.length - 1] !== status.state) seen.push(status.state);
    for (const check of [...checks]) check();
  });
  /** Resolves once `condition()` holds, checked now and after each change of the phone's status. */
  const when = (condition) => new Promise((resolve) => {
    const check = () => {
      if (!condition()) return;
      checks.delete(check);
      resolve(undefined);
    };
    checks.add(check);
    check();
  });
  const running = phone.client.run().catch(() => {});
  await when(() => phone.client.status.state === 'connected');

  const faults = [
    [{ status: 500, code: 'server_error' }, 'refused'],
    [{ status: 503, code: 'server_error', retryAfter: 1 }, 'refused'],
    ['reset', 'offline'],
    [{ status: 401, code: 'unauthorized' }, 'refused'],
  ];
  for (const [index, [injected, during]] of faults.entries()) {
    // The fault lasts until the other device has pushed its dismissal, and 30 s of the phone's time.
    const start = now;
    fault = injected;
    until = Infinity;
    seen = [];
    await laptop.replica.invalidate(`t${index}`, 'tipClosed');
    await laptop.client.syncOnce();
    await when(() => seen.includes(during));
    until = start + 30_000;
    // Connected again, and the page that carries the dismissal merged (each merge moves the status).
    await when(() => seen.indexOf('connected', seen.indexOf(during)) > 0
      && phone.replica.status(`t${index}`) === 'invalidated:tipClosed');
    assert.equal(phone.client.status.state, 'connected', JSON.stringify(seen));
  }
  phone.client.stop();
  await running;
  assert.equal(phone.client.status.state, 'stopped');
});

