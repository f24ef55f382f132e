// The conformance corpus's server vectors (conformance/server/), sent over HTTP by the JavaScript
// client's runner to a real tipsync-server: each vector's requests in order, on a fresh server whose
// account has devices `phone` and `laptop` with tokens, and an admin key for `"as": "admin"`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { canonicalText, isObject, jsonEquals, parse } from '../src/index.js';
import { serverBinary, startServer } from './server.js';

const directory = join(fileURLToPath(new URL('.', import.meta.url)), '../../../conformance/server');
const names = readdirSync(directory).filter((name) => name.endsWith('.json')).sort();
const skip = serverBinary ? false : 'TIPSYNC_SERVER_BIN is not set (swift test sets it)';

/** Where `actual` fails to contain `wanted`: objects need every wanted member, arrays match element by element. */
function difference(actual, wanted, path = '') {
  if (isObject(actual) && isObject(wanted)) {
    for (const key of Object.keys(wanted)) {
      if (!Object.prototype.hasOwnProperty.call(actual, key)) return `${path}.${key}: missing`;
      const found = difference(actual[key], wanted[key], `${path}.${key}`);
      if (found) return found;
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

test('the server corpus is there', () => {
  assert.ok(names.length >= 3, `conformance/server/ holds ${names.length} vectors`);
});

for (const name of names) {
  test(`${name}: the server answers as the vector says`, { skip }, async () => {
    const vector = /** @type {any} */ (parse(readFileSync(join(directory, name), 'utf8')));
    const server = await startServer(['phone', 'laptop']);
    const problems = [];
    try {
      for (const [index, request] of vector.requests.entries()) {
        const label = `requests[${index}] ${request.method} ${request.path}`;
        const headers = {};
        if (typeof request.as === 'string') {
          headers.Authorization = `Bearer ${request.as === 'admin' ? server.adminKey : server.tokens[request.as] ?? 'none'}`;
        }
        Object.assign(headers, request.headers ?? {});
        const body = typeof request.bodyText === 'string' ? request.bodyText : request.body === undefined ? undefined : canonicalText(request.body);
        const response = await fetch(server.url + request.path, { method: request.method, headers, body });
        const text = await response.text();
        const expect = request.expect;
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
        if (expect.json !== undefined) {
          const found = json === null ? `the body is not JSON: ${text.slice(0, 300)}` : difference(json, expect.json);
          if (found) problems.push(`${label}: ${found}`);
        }
        for (const [header, value] of Object.entries(expect.headers ?? {})) {
          if (response.headers.get(header) !== value) {
            problems.push(`${label}: header ${header} is ${response.headers.get(header) ?? 'absent'}, expected ${value}`);
          }
        }
      }
    } finally {
      await server.stop();
    }
    assert.deepEqual(problems, []);
  });
}
