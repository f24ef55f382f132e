// Every value is checked with the protocol's rules when it is written (protocol.md §1, §3), so a
// change the server would refuse is never stored, never pushed, and never holds up the outbox.

import { test } from 'node:test';
import assert from 'node:assert/strict';

test('a value the server would refuse is refused when it is written, and nothing is stored', async () => {
  const { Replica, MemoryStore, parseCatalog } = await import('../src/core.js');
  const replica = await Replica.open({ device: 'browser', store: new MemoryStore(), catalog: parseCatalog({ tips: [] }) });
  // Canonically equivalent member names (protocol.md §1), built in code where no parser sees them.
  await assert.rejects(replica.setParameter('profile', { 'é': 1, 'e\u0301': 2 }), /canonically equivalent/);
  await assert.rejects(replica.donate('opened', { nested: [{ 'Å': 1, 'A\u030a': 2 }] }), /info\.nested\[0\]: .*canonically equivalent/);
  await assert.rejects(replica.setParameter('when', new Date(0)), /Date is not a JSON value/);
  await assert.rejects(replica.setParameter('nothing', undefined), /undefined is not a JSON value/);
  assert.equal(replica.lastLocalSeq, 0);
  assert.equal(replica.outbox(10).length, 0);
  await replica.setParameter('profile', { 'é': 1, plan: 'pro' });
  assert.equal(replica.outbox(10).length, 1);
});

test('a catalog number beyond the number model is refused, as the server refuses it', async () => {
  const { parseCatalog } = await import('../src/core.js');
  const tip = (options) => JSON.stringify({ tips: [{ id: 't', title: 'T', options }] });
  assert.throws(() => parseCatalog('{"tips":[{"id":"t","title":"T","options":{"maxDisplayCount":1e16}}]}'), /tips\[0\]\.options\.maxDisplayCount/);
  assert.throws(() => parseCatalog('{"tips":[{"id":"t","title":"T","options":{"maxDisplayCount":9007199254740992}}]}'), /maxDisplayCount/);
  assert.throws(() => parseCatalog(tip({ maxDisplayDuration: 1e300 })), /tips\[0\]\.options\.maxDisplayDuration: must be a number of seconds from 0 to 9007199254740991/);
  assert.equal(parseCatalog(tip({ maxDisplayCount: 9007199254740991 })).tips[0].options.maxDisplayCount, 9007199254740991);
});

test('a change larger than 64 KiB of canonical text is refused when it is written, as the server refuses it', async () => {
  const { Replica, MemoryStore, parseCatalog, MAX_CHANGE_BYTES, changeText } = await import('../src/core.js');
  const replica = await Replica.open({ device: 'browser', store: new MemoryStore(), catalog: parseCatalog({ tips: [] }) });
  const large = 'x'.repeat(MAX_CHANGE_BYTES);
  await assert.rejects(replica.setParameter('big', large), { name: 'ChangeError', field: '', message: /^its canonical JSON text is \d+ bytes, over the 65536 bytes/ });
  await assert.rejects(replica.donate('opened', { note: large }), /over the 65536 bytes a change may have/);
  assert.equal(replica.lastLocalSeq, 0);
  assert.equal(replica.outbox(10).length, 0);
  // Exactly the limit is written: the text counts UTF-8 bytes ('é' is two).
  const base = new TextEncoder().encode(changeText({ device: 'browser', seq: 1, hlc: '000000000000-0000', kind: 'parameter', id: 'big', value: '', unknown: {} })).length;
  const padding = MAX_CHANGE_BYTES - base;
  await assert.rejects(replica.setParameter('big', 'é' + 'x'.repeat(padding - 1)), /65537 bytes/);
  await replica.setParameter('big', 'é' + 'x'.repeat(padding - 2));
  assert.equal(new TextEncoder().encode(changeText(replica.outbox(10)[0])).length, MAX_CHANGE_BYTES);
});

test('a refused change is found by the answer\'s structure (revision 2.9), the message only from older servers', async () => {
  const { refusedIndex } = await import('../src/sync.js');
  assert.equal(refusedIndex({ change: 2, field: 'hlc', message: 'changes[5].hlc: wrong text' }), 2);
  assert.equal(refusedIndex({ field: 'seq', message: 'changes[1].seq: a push must carry consecutive …' }), -1);
  assert.equal(refusedIndex({ change: 0, message: 'changes[0]: over 65,536 bytes' }), 0);
  // A server before 2.9: the message's start.
  assert.equal(refusedIndex({ message: 'changes[3].value: not in the number model' }), 3);
  assert.equal(refusedIndex({ message: 'changes[3].seq: numbering' }), -1);
  assert.equal(refusedIndex({ message: 'body: not a push' }), -1);
});
