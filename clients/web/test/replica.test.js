// The replica on its own, without a server: what stays local to a device.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Replica, MemoryStore, parseCatalog } from '../src/index.js';

test('a reset clears transient values only on the device that resets (protocol.md §4)', async () => {
  const catalog = parseCatalog({
    parameters: [{ id: 'inTrial', default: false, transient: true }],
    tips: [{ id: 'upgrade', title: 'Upgrade', rules: [{ '==': [{ param: 'inTrial' }, false] }] }],
  });
  const phone = await Replica.open({ device: 'phone', store: new MemoryStore(), catalog });
  const laptop = await Replica.open({ device: 'laptop', store: new MemoryStore(), catalog });
  for (const replica of [phone, laptop]) await replica.setParameter('inTrial', true);
  await phone.resetDatastore();
  await laptop.applyRemote(phone.outbox(10));
  assert.equal(phone.parameterValue('inTrial'), false, 'the catalog default, after the reset');
  assert.equal(laptop.parameterValue('inTrial'), true, 'a merged reset leaves local values');
  assert.equal(phone.status('upgrade'), 'available');
  assert.equal(laptop.status('upgrade'), 'pending');
});
