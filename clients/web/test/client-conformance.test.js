// The conformance corpus's client vectors (conformance/client/, protocol.md §14), run by the
// JavaScript client: the vector's local operations on a fresh replica, its sync operations against
// the vector's scripted server answers, and after each `expect` step the requests the client sent and
// what the replica then reads — the same files the Swift runner (ClientConformanceTests) checks.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { MemoryStore, Replica, SyncClient, canonicalText, jsonEquals, parse, parseCatalog } from '../src/core.js';

const directory = join(fileURLToPath(new URL('.', import.meta.url)), '../../../conformance/client');
const names = readdirSync(directory).filter((name) => name.endsWith('.json')).sort();

/**
 * Whether `actual` contains `wanted` (conformance/README, `expect.json`): objects need every wanted
 * member, arrays the same length with each element contained, other values equal.
 */
function contains(actual, wanted) {
  if (Array.isArray(wanted)) {
    return Array.isArray(actual) && actual.length === wanted.length && wanted.every((element, index) => contains(actual[index], element));
  }
  if (wanted !== null && typeof wanted === 'object') {
    return actual !== null && typeof actual === 'object' && !Array.isArray(actual)
      && Object.entries(wanted).every(([key, value]) => Object.hasOwn(actual, key) && contains(actual[key], value));
  }
  return jsonEquals(actual, wanted);
}

/**
 * Whether a sent request is the one a vector describes: its `method`, its `path` without the query,
 * each `query` parameter given (decoded; `null`: absent), and a `body` its JSON contains.
 */
function matches(sent, wanted) {
  if (sent.method !== wanted.method || sent.url.pathname !== wanted.path) return false;
  if (wanted.authorization !== undefined && sent.authorization !== wanted.authorization) return false;
  for (const [name, value] of Object.entries(wanted.query ?? {})) {
    if (!jsonEquals(sent.url.searchParams.get(name), value)) return false;
  }
  if (wanted.body !== undefined) {
    if (typeof sent.body !== 'string') return false;
    return contains(parse(sent.body), wanted.body);
  }
  return true;
}

/**
 * The vector's server as a `fetch`: answers each request from the script by `"METHOD /path"` (the
 * path without its query), the listed answers in turn and the last one again once they run out;
 * anything not in the script is `404 not_found`. Records every request.
 */
function scriptedServer(script, now) {
  /** @type {{method: string, url: URL, body: unknown, authorization: string | undefined}[]} */
  let sent = [];
  let total = 0;
  let overrun = () => {};
  const overran = new Promise((resolve) => (overrun = resolve));
  const answered = new Map();
  const fetch = async (url, init = {}) => {
    const request = { method: init.method ?? 'GET', url: new URL(String(url)), body: init.body, authorization: init.headers?.Authorization };
    sent.push(request);
    total += 1;
    if (total > REQUEST_BOUND) {
      // More requests than any vector needs: the client retries what it should not, or never stops.
      overrun();
      await new Promise((resolve, reject) => init.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
    }
    const route = `${request.method} ${request.url.pathname}`;
    const answers = script[route] ?? [];
    const headers = { 'Content-Type': 'application/json' };
    if (answers.length === 0) {
      return new Response(canonicalText({ error: { code: 'not_found', message: 'no such route', serverTime: now } }), { status: 404, headers });
    }
    const index = Math.min(answered.get(route) ?? 0, answers.length - 1);
    answered.set(route, index + 1);
    const answer = answers[index];
    return new Response(answer.json === undefined ? '' : canonicalText(answer.json), { status: answer.status, headers });
  };
  return { fetch, overran, take: () => { const taken = sent; sent = []; return taken; } };
}

const REQUEST_BOUND = 200;

/**
 * Runs `client.run()` until its status says `until` (then stops it), the run ends, or the scripted
 * server has answered more requests than any vector needs; the states it went through, each once in a row.
 */
async function runUntil(client, until, server) {
  const seen = [];
  const note = (state) => { if (seen[seen.length - 1] !== state) seen.push(state); };
  let reach;
  const reachedState = new Promise((resolve) => (reach = resolve));
  const stopListening = client.onStatus((status) => {
    note(status.state);
    if (status.state === until) reach(true);
  });
  const running = client.run().then(() => client.status.state === until, () => client.status.state === until);
  const reached = await Promise.race([reachedState, running, server.overran.then(() => false)]);
  client.stop();
  await running;
  stopListening();
  note(client.status.state);
  return { reached, seen };
}

/** What differs from a check of the client's status: `states` (in order, others between) and `sync`. */
function statusMismatches(client, states, expect) {
  const found = [];
  if (expect.states) {
    let next = 0;
    for (const state of expect.states) {
      const at = states.indexOf(state, next);
      if (at < 0) {
        found.push(`states: expected ${JSON.stringify(expect.states)} in order, went through ${JSON.stringify(states)}`);
        break;
      }
      next = at + 1;
    }
  }
  const status = client.status;
  const actual = { state: status.state, code: status.lastError?.code ?? undefined };
  for (const [name, wanted] of Object.entries(expect.sync ?? {})) {
    if (actual[name] !== wanted) found.push(`sync.${name}: got ${JSON.stringify(actual[name])}, expected ${JSON.stringify(wanted)}`);
  }
  return found;
}

/** What differs from a check: the requests sent since the last one (in order, others between), and what the replica reads. */
function mismatches(replica, sent, expect) {
  const found = [];
  if (expect.requests) {
    let next = 0;
    for (const [index, wanted] of expect.requests.entries()) {
      const at = sent.findIndex((request, position) => position >= next && matches(request, wanted));
      if (at < 0) {
        found.push(`requests[${index}]: ${canonicalText(wanted)} is not among the requests after the last one found; sent ${JSON.stringify(sent.map((request) => `${request.method} ${request.url.pathname}${request.url.search}`))}`);
        break;
      }
      next = at + 1;
    }
  }
  const compare = (what, actual, wanted) => {
    if (!jsonEquals(actual, wanted)) found.push(`${what}: got ${canonicalText(actual)}, expected ${canonicalText(wanted)}`);
  };
  if (expect.requestCount !== undefined) compare('requestCount', sent.length, expect.requestCount);
  if (expect.localSeq !== undefined) compare('localSeq', replica.lastLocalSeq, expect.localSeq);
  if (expect.acknowledged !== undefined) compare('acknowledged', replica.progress.pushedSeq, expect.acknowledged);
  for (const [id, wanted] of Object.entries(expect.parameters ?? {})) compare(`parameter '${id}'`, replica.parameterValue(id), wanted);
  for (const [event, wanted] of Object.entries(expect.donations ?? {})) {
    compare(`donations of '${event}'`, replica.state.donations(event).map((donation) => donation.id), wanted);
  }
  for (const [tip, wanted] of Object.entries(expect.status ?? {})) compare(`status of '${tip}'`, replica.status(tip), wanted);
  return found;
}

test('the client corpus is there', () => {
  assert.ok(names.length >= 2, `conformance/client/ holds ${names.length} vectors`);
});

for (const name of names) {
  test(`client vector ${name}`, async () => {
    const vector = parse(readFileSync(join(directory, name), 'utf8'));
    const replica = await Replica.open({
      device: vector.device, catalog: parseCatalog(vector.catalog ?? {}), store: new MemoryStore(), now: () => vector.now,
    });
    if (vector.context) {
      // The device's context before the first step (§13.8): what targeting and experiments read.
      const { account, ...rest } = vector.context;
      replica.setContext(rest);
      if (typeof account === 'string') await replica.setAccount(account);
    }
    const server = scriptedServer(vector.server, vector.now);
    // The credential source: the vector's tokens in turn, the last again once they run out.
    let given = 0;
    const tokenProvider = vector.tokens ? async () => vector.tokens[Math.min(given++, vector.tokens.length - 1)] : undefined;
    const client = new SyncClient(replica, {
      server: 'http://conformance.invalid', token: vector.tokens ? undefined : 'token', tokenProvider,
      fetch: server.fetch, sleep: async () => {}, compressPushes: false, live: false, longPollSeconds: 1,
    });
    const problems = [];
    let states = [];
    for (const [index, step] of vector.steps.entries()) {
      if (step.expect) {
        for (const mismatch of mismatches(replica, server.take(), step.expect)) problems.push(`steps[${index}]: ${mismatch}`);
        for (const mismatch of statusMismatches(client, states, step.expect)) problems.push(`steps[${index}]: ${mismatch}`);
        states = [];
        if (problems.length > 0) break; // later steps build on this one: stop at the first check that fails
        continue;
      }
      if (step.refused === true) {
        // A local operation the writer must refuse, storing nothing.
        const operation = step.do === 'donate' ? replica.donate(step.event, step.info) : replica.setParameter(step.id, step.value);
        const refused = await operation.then(() => false, () => true);
        if (!refused) problems.push(`steps[${index}]: ${step.do} was written, expected it refused`);
        continue;
      }
      switch (step.do) {
        case 'donate': await replica.donate(step.event, step.info); break;
        case 'setParameter': await replica.setParameter(step.id, step.value); break;
        case 'resetDatastore': await replica.resetDatastore(); break;
        // The app asks whether to show the tip now (TipSync.status()): what records its experiment's reach (§13.12).
        case 'askStatus': await replica.recordReach(step.tip); replica.status(step.tip); break;
        case 'display': await replica.recordDisplay(step.tip); break;
        case 'pull': await client.pullAll(0); break;
        case 'push': await client.pushAll(); break;
        case 'run': {
          const { reached, seen } = await runUntil(client, step.until, server);
          states.push(...seen);
          if (!reached) problems.push(`steps[${index}]: the client never reached '${step.until}'; its states: ${JSON.stringify(seen)}`);
          break;
        }
        default: throw new Error(`${name} steps[${index}]: unknown step ${canonicalText(step)}`);
      }
    }
    assert.deepEqual(problems, []);
  });
}
