// Log compaction (protocol.md §8): which entries of a log no replica needs any more. Merging what is
// kept gives the same state as merging everything.

import { compareStamps, epochPrecedes, stampKey } from './hlc.js';
import { stampOf } from './change.js';
import { QUERY_LIMIT, dominatedDonations, donationPrecedes } from './state.js';

/** @typedef {import('./change.js').Change} Change */
/** @typedef {{position: number, change: Change}} LogEntry */

/**
 * The positions of the entries compaction drops.
 * @param {LogEntry[]} entries
 * @returns {Set<number>}
 */
export function superseded(entries) {
  const dropped = new Set();
  let reset = null;
  for (const { change } of entries) {
    if (change.kind === 'datastoreReset' && (!reset || compareStamps(stampOf(change), reset) > 0)) reset = stampOf(change);
  }
  const latestParameter = new Map();
  const latestEligibility = new Map();
  const latestEligible = new Map();
  const latestDeletion = new Map();
  /** @type {Map<string, LogEntry[]>} */
  const displays = new Map();
  /** @type {Map<string, LogEntry[]>} */
  const donations = new Map();
  const keepLatest = (/** @type {LogEntry} */ entry, /** @type {Map<string, LogEntry>} */ table, /** @type {string} */ key) => {
    const current = table.get(key);
    if (!current) table.set(key, entry);
    else if (compareStamps(stampOf(current.change), stampOf(entry.change)) < 0) {
      dropped.add(current.position);
      table.set(key, entry);
    } else {
      dropped.add(entry.position);
    }
  };
  const later = (/** @type {Map<string, LogEntry>} */ table, /** @type {string} */ key, /** @type {LogEntry} */ entry) => {
    const current = table.get(key);
    if (!current || compareStamps(stampOf(current.change), stampOf(entry.change)) <= 0) table.set(key, entry);
  };
  for (const entry of entries) {
    const { change } = entry;
    const stamp = stampOf(change);
    if (change.kind === 'datastoreReset') {
      // The loop above found the latest reset; this change is one, so there is one.
      if (compareStamps(stamp, /** @type {import('./hlc.js').Stamp} */ (reset)) !== 0) dropped.add(entry.position);
      continue;
    }
    if (change.kind === 'display') {
      if (reset && epochPrecedes(change.epoch ?? null, reset)) dropped.add(entry.position);
      else {
        const key = `${change.tip}\u0000${change.device}\u0000${stampKey(change.epoch ?? null)}`;
        const list = displays.get(key);
        if (list) list.push(entry);
        else displays.set(key, [entry]);
      }
      continue;
    }
    if (reset && compareStamps(stamp, reset) <= 0) {
      dropped.add(entry.position);
      continue;
    }
    switch (change.kind) {
      case 'parameter':
        keepLatest(entry, latestParameter, /** @type {string} */ (change.id));
        break;
      case 'eligibility':
        // Kept if it is the latest write or the latest `eligible` (its stamp starts the display epoch).
        if (change.state === 'eligible') later(latestEligible, /** @type {string} */ (change.tip), entry);
        later(latestEligibility, /** @type {string} */ (change.tip), entry);
        break;
      case 'donation': {
        const event = /** @type {string} */ (change.event);
        const list = donations.get(event);
        if (list) list.push(entry);
        else donations.set(event, [entry]);
        break;
      }
      case 'donationsDeleted':
        keepLatest(entry, latestDeletion, /** @type {string} */ (change.event));
        break;
    }
  }
  const keptEligibility = new Set([...latestEligibility.values(), ...latestEligible.values()].map((entry) => entry.position));
  for (const entry of entries) {
    if (entry.change.kind === 'eligibility' && !keptEligibility.has(entry.position)) dropped.add(entry.position);
  }
  for (const list of displays.values()) {
    const keep = new Set();
    for (const measure of [(/** @type {Change} */ c) => c.count, (/** @type {Change} */ c) => c.duration, (/** @type {Change} */ c) => c.lastDisplayed]) {
      // The first of the largest by position: every replica compacting the same log agrees.
      let best = null;
      for (const entry of list) {
        // A display change has its counters (decodeChange makes it so).
        const candidate = /** @type {number} */ (measure(entry.change));
        if (best === null || candidate > best.value) best = { value: candidate, position: entry.position };
      }
      if (best) keep.add(best.position);
    }
    for (const entry of list) if (!keep.has(entry.position)) dropped.add(entry.position);
  }
  for (const [event, list] of donations) {
    const deletion = latestDeletion.get(event);
    const survivors = [];
    for (const entry of list) {
      if (deletion && compareStamps(stampOf(entry.change), stampOf(deletion.change)) <= 0) dropped.add(entry.position);
      else survivors.push(entry);
    }
    // Hidden for ever by the ceiling every rule has (§8 rule 9).
    if (survivors.length <= QUERY_LIMIT) continue;
    // A donation change has its date and id.
    const donationOf = (/** @type {LogEntry} */ entry) => /** @type {Required<Change>} */ (entry.change);
    survivors.sort((a, b) => (donationPrecedes(donationOf(a), donationOf(b)) ? -1 : donationPrecedes(donationOf(b), donationOf(a)) ? 1 : 0));
    for (const index of dominatedDonations(survivors.map((entry) => stampOf(entry.change)), QUERY_LIMIT)) {
      dropped.add(survivors[index].position);
    }
  }
  return dropped;
}
