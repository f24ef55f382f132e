// The conformance corpus's server vectors (conformance/server/), sent over HTTP by the JavaScript
// client's runner to a real tipsync-server: each vector's requests in order, on a fresh server whose
// account has devices `phone` and `laptop` with tokens, and an admin key for `"as": "admin"`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { canonicalText, isObject, jsonEquals, parse } from '../src/core.js';
import { EventStreamReader } from '../src/sync.js';
import { serverBinary, startServer } from './server.js';

const directory = join(fileURLToPath(new URL('.', import.meta.url)), '../../../conformance/server');
const names = readdirSync(directory).filter((name) => name.endsWith('.json')).sort();
const skip = serverBinary ? false : 'TIPSYNC_SERVER_BIN is not set (swift test sets it)';

/** Where `actual` fails to contain `wanted`: objects need every wanted member, arrays match element by element. */
function difference(actual, wanted, path = '', inOrder = false) {
  if (isObject(actual) && isObject(wanted)) {
    for (const key of Object.keys(wanted)) {
      if (!Object.prototype.hasOwnProperty.call(actual, key)) return `${path}.${key}: missing`;
      const found = difference(actual[key], wanted[key], `${path}.${key}`, inOrder);
      if (found) return found;
    }
    return null;
  }
  if (Array.isArray(actual) && Array.isArray(wanted) && inOrder) {
    // `expect.includes`: each wanted element in a later element than the one before, others between.
    let next = 0;
    for (let i = 0; i < wanted.length; i++) {
      while (next < actual.length && difference(actual[next], wanted[i], '', true) !== null) next++;
      if (next === actual.length) return `${path}[${i}]: ${canonicalText(wanted[i])} is not among the elements after the last one found`;
      next++;
    }
    return null;
  }
  if (Array.isArray(actual) && Array.isArray(wanted)) {
    if (actual.length !== wanted.length) return `${path}: ${actual.length} elements, expected ${wanted.length}`;
    for (let i = 0; i < wanted.length; i++) {
      const found = difference(actual[i], wanted[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  return jsonEquals(actual, wanted) && canonicalText(actual) === canonicalText(wanted)
    ? null
    : `${path}: got ${canonicalText(actual)}, expected ${canonicalText(wanted)}`;
}

/** `value` with `{{name}}` in every string replaced by what was saved under `name`. */
function substitute(value, saved) {
  if (typeof value === 'string') return value.replace(/\{\{(\w+)\}\}/g, (whole, key) => saved.get(key) ?? whole);
  if (Array.isArray(value)) return value.map((element) => substitute(element, saved));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, substitute(member, saved)]));
  return value;
}

/**
 * The next `count` events of an open stream (waiting at most 10 s for them); with `keep`, they stay
 * to be read again. The stream is closed after a read that does not keep.
 */
async function readEvents(stream, count, keep = false) {
  const deadline = Date.now() + 10_000;
  while (stream.pending.length < count && Date.now() < deadline) {
    const timer = new Promise((resolve) => setTimeout(() => resolve({ timeout: true }), Math.max(1, deadline - Date.now())));
    const piece = await Promise.race([stream.reader.read(), timer]);
    if (piece.timeout || piece.done) break;
    stream.pending.push(...stream.events.feed(piece.value));
  }
  const events = stream.pending.slice(0, count);
  if (!keep) await stream.reader.cancel().catch(() => {});
  return events;
}

/** A stream's events against `expect.events`, and the chaining rule of every stream's pages. */
function streamProblems(events, expect) {
  const problems = [];
  const wanted = expect.events ?? [];
  if (events.length !== wanted.length) problems.push(`${events.length} events, expected ${wanted.length}`);
  let previous = null;
  for (let i = 0; i < Math.min(events.length, wanted.length); i++) {
    if (wanted[i].event !== undefined && events[i].name !== wanted[i].event) problems.push(`events[${i}] is ${events[i].name}, expected ${wanted[i].event}`);
    let json = null;
    try {
      json = /** @type {any} */ (parse(events[i].data));
    } catch {
      json = null;
    }
    if (wanted[i].json !== undefined) {
      const found = json === null ? `events[${i}]: the data is not JSON` : difference(json, wanted[i].json, `events[${i}]`);
      if (found) problems.push(found);
    }
    if (events[i].name === 'changes' && json !== null) {
      if (previous !== null && json.from !== previous) problems.push(`events[${i}]: from is ${json.from}, not the cursor before it`);
      previous = json.cursor;
    }
  }
  return problems;
}

test('the server corpus is there', () => {
  assert.ok(names.length >= 3, `conformance/server/ holds ${names.length} vectors`);
});

for (const name of names) {
  test(`${name}: the server answers as the vector says`, { skip }, async () => {
    const vector = /** @type {any} */ (parse(readFileSync(join(directory, name), 'utf8')));
    const server = await startServer(['phone', 'laptop']);
    const problems = [];
    /** Values a request saved (`save`), substituted for `{{name}}` in later paths and expectations. */
    const saved = new Map([['account', encodeURIComponent(server.account)]]);
    /** Streams opened (`open`) and not read yet. */
    const streams = new Map();
    try {
      for (const [index, request] of vector.requests.entries()) {
        if (typeof request.read === 'string') {
          const label = `requests[${index}] stream ${request.read}`;
          const stream = streams.get(request.read);
          streams.delete(request.read);
          const events = await readEvents(stream, request.events);
          problems.push(...streamProblems(events, substitute(request.expect, saved)).map((problem) => `${label}: ${problem}`));
          continue;
        }
        const path = substitute(request.path, saved);
        const label = `requests[${index}] ${request.method} ${path}`;
        const headers = {};
        if (typeof request.as === 'string') {
          headers.Authorization = `Bearer ${request.as === 'admin' ? server.adminKey : server.tokens[request.as] ?? 'none'}`;
        }
        Object.assign(headers, request.headers ?? {});
        const body = typeof request.bodyText === 'string' ? request.bodyText : request.body === undefined ? undefined : canonicalText(request.body);
        const expect = substitute(request.expect, saved);
        if (typeof request.open === 'string') {
          const response = await fetch(server.url + path, { method: request.method, headers });
          if (response.status !== expect.status) problems.push(`${label}: status ${response.status}, expected ${expect.status}`);
          for (const [header, value] of Object.entries(expect.headers ?? {})) {
            if (response.headers.get(header) !== value) problems.push(`${label}: header ${header} is ${response.headers.get(header)}, expected ${value}`);
          }
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          streams.set(request.open, { reader, events: new EventStreamReader(), pending: [] });
          // The stream is open once its first event (`ready`) arrived: it sees every push from here on.
          await readEvents(streams.get(request.open), 1, true);
          continue;
        }
        const response = await fetch(server.url + path, { method: request.method, headers, body });
        const text = await response.text();
        if (expect.status !== undefined && response.status !== expect.status) {
          problems.push(`${label}: status ${response.status}, expected ${expect.status}; body ${text.slice(0, 300)}`);
        }
        let json = null;
        try {
          json = /** @type {any} */ (parse(text));
        } catch {
          json = null;
        }
        if (expect.error !== undefined && json?.error?.code !== expect.error) {
          problems.push(`${label}: error code ${json?.error?.code ?? 'none'}, expected ${expect.error}`);
        }
        if (expect.field !== undefined && !String(json?.error?.message ?? '').startsWith(`${expect.field}:`)) {
          problems.push(`${label}: error message should begin "${expect.field}:", got ${text.slice(0, 300)}`);
        }
        for (const [member, inOrder] of [['json', false], ['includes', true]]) {
          if (expect[member] === undefined) continue;
          const found = json === null ? `the body is not JSON: ${text.slice(0, 300)}` : difference(json, expect[member], '', inOrder);
          if (found) problems.push(`${label}: ${member}: ${found}`);
        }
        for (const [header, value] of Object.entries(expect.headers ?? {})) {
          if (response.headers.get(header) !== value) {
            problems.push(`${label}: header ${header} is ${response.headers.get(header) ?? 'absent'}, expected ${value}`);
          }
        }
        for (const [key, member] of Object.entries(request.save ?? {})) {
          if (typeof json?.[member] === 'string') saved.set(key, json[member]);
        }
      }
      assert.equal(streams.size, 0, 'every stream opened is read');
    } finally {
      for (const stream of streams.values()) await stream.reader.cancel().catch(() => {});
      await server.stop();
    }
    assert.deepEqual(problems, []);
  });
}
