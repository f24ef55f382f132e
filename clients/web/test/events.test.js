// The server-sent events reader of the live stream (protocol.md §9): events come out whole whatever
// pieces the bytes arrive in, with any of the three line endings.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventStreamReader } from '../src/sync.js';

const stream = 'event: ready\ndata: {"cursor":"g.0"}\n\n: heartbeat\n\nevent: changes\r\ndata: {"changes":[],\r\ndata: "cursor":"g.1"}\r\n\r\nevent: catalog\rdata: {}\r\rdata: plain\n\n';
const expected = [
  { name: 'ready', data: '{"cursor":"g.0"}' },
  { name: 'changes', data: '{"changes":[],\n"cursor":"g.1"}' },
  { name: 'catalog', data: '{}' },
  { name: 'message', data: 'plain' },
];

test('events come out whole, in one piece or byte by byte', () => {
  assert.deepEqual(new EventStreamReader().feed(stream), expected);
  const reader = new EventStreamReader();
  const events = [];
  for (const character of stream) events.push(...reader.feed(character));
  assert.deepEqual(events, expected);
});

test('an event split anywhere, even between \\r and \\n, is one event', () => {
  for (let cut = 1; cut < stream.length; cut++) {
    const reader = new EventStreamReader();
    const events = [...reader.feed(stream.slice(0, cut)), ...reader.feed(stream.slice(cut))];
    assert.deepEqual(events, expected, `cut at ${cut}`);
  }
});
