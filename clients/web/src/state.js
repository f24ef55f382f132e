// A replica's state: the result of merging every change it has seen (protocol.md §4). Replicas that
// applied the same set of changes, in any order and any number of times, hold equal states.
//
// Keys are JavaScript strings, which compare by code units: ids are distinct by code points, never
// by canonical equivalence, as the protocol says.

import { compareCodePoints } from './json.js';
import { compareStamps, epochPrecedes, laterEpoch, stampKey } from './hlc.js';
import { stampOf } from './change.js';

/**
 * @typedef {import('./hlc.js').Stamp} Stamp
 * @typedef {import('./change.js').Change} Change
 * @typedef {import('./json.js').JSONValue} JSONValue
 * @typedef {{state: 'eligible' | 'invalidated', reason?: string}} Eligibility
 * @typedef {{id: string, date: number, info?: JSONValue, hasInfo: boolean, stamp: Stamp}} Donation
 * @typedef {{maximumCount?: number, maximumAge?: number}} DonationLimit
 * @typedef {{device: string, epoch: Stamp | null, count: number, duration: number, lastDisplayed: number}} DisplayCounter
 */

/**
 * Donations are ordered by date, then id by code points.
 * @param {{date: number, id: string}} a
 * @param {{date: number, id: string}} b
 * @returns {boolean}
 */
export function donationPrecedes(a, b) {
  if (a.date !== b.date) return a.date < b.date;
  return compareCodePoints(a.id, b.id) < 0;
}

/** A rule sees at most an event's newest 1000 donations (protocol.md §4.5). */
export const QUERY_LIMIT = 1000;

/**
 * Which donations of one event no future change can make visible (protocol.md §4.5): the indices of
 * those outranked, by (date, id), by at least `maximum` donations stamped no earlier. A deletion or
 * reset that removes any of those removes it too. A replica applies it with its catalog's
 * `maximumCount`; compaction with the 1000 every rule sees at most (§8).
 * @param {Stamp[]} stamps in rank order, lowest first
 * @param {number} maximum
 * @returns {Set<number>}
 */
export function dominatedDonations(stamps, maximum) {
  const dominated = new Set();
  if (maximum < 0 || stamps.length <= maximum) return dominated;
  /** @type {Stamp[]} ascending, at most `maximum` */
  const largest = [];
  for (let index = stamps.length - 1; index >= 0; index--) {
    const stamp = stamps[index];
    if (largest.length === maximum && maximum > 0 && compareStamps(largest[0], stamp) >= 0) dominated.add(index);
    if (maximum > 0 && (largest.length < maximum || compareStamps(largest[0], stamp) < 0)) {
      if (largest.length === maximum) largest.shift();
      let position = largest.findIndex((other) => compareStamps(other, stamp) > 0);
      if (position < 0) position = largest.length;
      largest.splice(position, 0, stamp);
    }
  }
  return dominated;
}

/** How long past `maximumAge` a donation is still stored (a day), so clocks that differ agree. */
export const DONATION_AGE_GRACE_MILLISECONDS = 86_400_000;

/** An event's donations, sorted by (date, id), and its latest `deleteDonations()`. */
export class EventRecord {
  constructor() {
    /** @type {Donation[]} */
    this.donations = [];
    /** @type {Set<string>} */
    this.ids = new Set();
    /** @type {Stamp | null} */
    this.deletedAt = null;
  }

  /**
   * Inserts keeping (date, id) order; `false` when the id is already present.
   * @param {Donation} donation
   */
  insert(donation) {
    if (this.ids.has(donation.id)) return false;
    this.ids.add(donation.id);
    const list = this.donations;
    if (list.length > 0 && donationPrecedes(donation, list[list.length - 1])) {
      let low = 0;
      let high = list.length;
      while (low < high) {
        const mid = (low + high) >> 1;
        if (donationPrecedes(list[mid], donation)) low = mid + 1;
        else high = mid;
      }
      list.splice(low, 0, donation);
    } else {
      list.push(donation);
    }
    return true;
  }

  /** @param {(donation: Donation) => boolean} predicate */
  removeWhere(predicate) {
    const kept = this.donations.filter((donation) => !predicate(donation));
    if (kept.length === this.donations.length) return;
    for (const donation of this.donations) if (predicate(donation)) this.ids.delete(donation.id);
    this.donations = kept;
  }

  /**
   * Drops every donation no future change can make visible under a `maximumCount` limit: one
   * outranked, by (date, id), by at least `maximum` donations stamped no earlier than it. Which
   * donations this drops depends only on the set present, never on the order they came in.
   * @param {number} maximum
   */
  pruneDominated(maximum) {
    if (maximum < 0 || this.donations.length <= maximum) return;
    const dominated = dominatedDonations(this.donations.map((donation) => donation.stamp), maximum);
    if (dominated.size === 0) return;
    for (const index of dominated) this.ids.delete(this.donations[index].id);
    this.donations = this.donations.filter((_, index) => !dominated.has(index));
  }
}

/** Everything a replica knows, as the merge of the changes it has seen. */
export class ReplicaState {
  constructor() {
    /**
     * The latest `resetDatastore()`.
     * @type {Stamp | null}
     */
    this.datastoreReset = null;
    /** @type {Map<string, {value: JSONValue, stamp: Stamp}>} */
    this.parameters = new Map();
    /** @type {Map<string, {eligibility: {value: Eligibility, stamp: Stamp} | null, resetStamp: Stamp | null}>} */
    this.tips = new Map();
    /**
     * Per tip, per (device, epoch): cumulative display counters.
     * @type {Map<string, Map<string, DisplayCounter>>}
     */
    this.displays = new Map();
    /** @type {Map<string, EventRecord>} */
    this.events = new Map();
    /**
     * Milliseconds since 1970 of the latest display of any tip on any device.
     * @type {number | null}
     */
    this.lastDisplayAnywhere = null;
  }

  /**
   * Merges one change; whether the state changed. Idempotent and order-independent.
   * @param {Change} change
   * @param {{[event: string]: DonationLimit}} donationLimits
   */
  apply(change, donationLimits = {}) {
    const stamp = stampOf(change);
    if (change.kind === 'datastoreReset') return this.#applyDatastoreReset(stamp);
    if (this.datastoreReset && compareStamps(stamp, this.datastoreReset) <= 0 && change.kind !== 'display') return false;
    switch (change.kind) {
      case 'parameter': {
        // A change read by `decodeChange` holds every member its kind has (protocol.md §3).
        const id = /** @type {string} */ (change.id);
        const current = this.parameters.get(id);
        if (current && compareStamps(stamp, current.stamp) <= 0) return false;
        this.parameters.set(id, { value: /** @type {JSONValue} */ (change.value), stamp });
        return true;
      }
      case 'eligibility': {
        const { tip, state, reason } = /** @type {Required<Change>} */ (change);
        return this.#mergeEligibility(tip, { value: { state, reason }, stamp });
      }
      case 'display': {
        const { tip, epoch, count, duration, lastDisplayed } = /** @type {Required<Change>} */ (change);
        return this.#mergeDisplay(tip, { device: change.device, epoch: epoch ?? null, count, duration, lastDisplayed });
      }
      case 'donation': {
        const event = /** @type {string} */ (change.event);
        const record = this.events.get(event);
        if (record?.deletedAt && compareStamps(stamp, record.deletedAt) <= 0) return false;
        const target = record ?? new EventRecord();
        /** @type {Donation} */
        const donation = { id: /** @type {string} */ (change.id), date: /** @type {number} */ (change.date), hasInfo: !!change.hasInfo, stamp };
        if (change.hasInfo) donation.info = change.info;
        if (!target.insert(donation)) return false;
        const limit = Object.prototype.hasOwnProperty.call(donationLimits, event) ? donationLimits[event] : undefined;
        if (limit?.maximumCount !== undefined) target.pruneDominated(limit.maximumCount);
        if (!record) this.events.set(event, target);
        return target.ids.has(donation.id);
      }
      case 'donationsDeleted': {
        const event = /** @type {string} */ (change.event);
        const record = this.events.get(event) ?? new EventRecord();
        if (record.deletedAt && compareStamps(stamp, record.deletedAt) <= 0) return false;
        record.deletedAt = stamp;
        record.removeWhere((donation) => compareStamps(donation.stamp, stamp) <= 0);
        this.events.set(event, record);
        return true;
      }
      default:
        return false;
    }
  }

  /** @param {string} tip @param {{value: Eligibility, stamp: Stamp}} incoming @returns {boolean} */
  #mergeEligibility(tip, incoming) {
    const current = this.tips.get(tip) ?? { eligibility: null, resetStamp: null };
    let changed = false;
    let eligibility = current.eligibility;
    if (!eligibility || compareStamps(incoming.stamp, eligibility.stamp) > 0) {
      eligibility = incoming;
      changed = true;
    }
    let resetStamp = current.resetStamp;
    if (incoming.value.state === 'eligible') {
      const later = laterEpoch(resetStamp, incoming.stamp);
      if (later !== resetStamp) {
        resetStamp = later;
        changed = true;
      }
    }
    if (changed) this.tips.set(tip, { eligibility, resetStamp });
    return changed;
  }

  /** @param {string} tip @param {DisplayCounter} incoming @returns {boolean} */
  #mergeDisplay(tip, incoming) {
    if (this.datastoreReset && epochPrecedes(incoming.epoch, this.datastoreReset)) return false;
    const key = `${incoming.device}\u0000${stampKey(incoming.epoch)}`;
    let counters = this.displays.get(tip);
    const current = counters?.get(key);
    const merged = current
      ? {
          device: current.device, epoch: current.epoch, count: Math.max(current.count, incoming.count),
          duration: Math.max(current.duration, incoming.duration),
          lastDisplayed: Math.max(current.lastDisplayed, incoming.lastDisplayed),
        }
      : incoming;
    if (current && merged.count === current.count && merged.duration === current.duration && merged.lastDisplayed === current.lastDisplayed) {
      return false;
    }
    if (!counters) {
      counters = new Map();
      this.displays.set(tip, counters);
    }
    counters.set(key, merged);
    this.lastDisplayAnywhere = Math.max(this.lastDisplayAnywhere ?? merged.lastDisplayed, merged.lastDisplayed);
    return true;
  }

  /** @param {Stamp} stamp @returns {boolean} */
  #applyDatastoreReset(stamp) {
    if (this.datastoreReset && compareStamps(stamp, this.datastoreReset) <= 0) return false;
    this.datastoreReset = stamp;
    /** @param {Stamp} other */
    const after = (other) => compareStamps(other, stamp) > 0;
    for (const [id, versioned] of this.parameters) if (!after(versioned.stamp)) this.parameters.delete(id);
    for (const [tip, record] of this.tips) {
      const eligibility = record.eligibility && after(record.eligibility.stamp) ? record.eligibility : null;
      const resetStamp = record.resetStamp && after(record.resetStamp) ? record.resetStamp : null;
      if (!eligibility && !resetStamp) this.tips.delete(tip);
      else this.tips.set(tip, { eligibility, resetStamp });
    }
    for (const [tip, counters] of this.displays) {
      for (const [key, counter] of counters) if (epochPrecedes(counter.epoch, stamp)) counters.delete(key);
      if (counters.size === 0) this.displays.delete(tip);
    }
    this.lastDisplayAnywhere = null;
    for (const counters of this.displays.values()) {
      for (const counter of counters.values()) {
        this.lastDisplayAnywhere = Math.max(this.lastDisplayAnywhere ?? counter.lastDisplayed, counter.lastDisplayed);
      }
    }
    for (const [event, record] of this.events) {
      if (record.deletedAt && !after(record.deletedAt)) record.deletedAt = null;
      record.removeWhere((donation) => !after(donation.stamp));
      if (record.donations.length === 0 && !record.deletedAt) this.events.delete(event);
    }
    return true;
  }

  /**
   * The stamp that began `tip`'s current display epoch.
   * @returns {Stamp | null}
   * @param {string} tip
   */
  displayEpoch(tip) {
    let epoch = laterEpoch(this.tips.get(tip)?.resetStamp ?? null, this.datastoreReset);
    for (const counter of this.displays.get(tip)?.values() ?? []) epoch = laterEpoch(epoch, counter.epoch);
    return epoch;
  }

  /**
   * Displays of `tip` summed over every device, in its current epoch (summed in device order).
   * @param {string} tip
   */
  displayTotals(tip) {
    const counters = this.displays.get(tip);
    if (!counters) return { count: 0, duration: 0 };
    const epoch = stampKey(this.displayEpoch(tip));
    const current = [...counters.values()]
      .filter((counter) => stampKey(counter.epoch) === epoch)
      .sort((a, b) => compareCodePoints(a.device, b.device));
    let count = 0;
    let duration = 0;
    for (const counter of current) {
      count += counter.count;
      duration += counter.duration;
    }
    return { count, duration };
  }

  /**
   * Whether `tip` has ever been displayed on any device (since the last datastore reset).
   * @param {string} tip
   * @returns {boolean}
   */
  hasDisplayed(tip) {
    return (this.displays.get(tip)?.size ?? 0) > 0;
  }

  /**
   * This device's counter for `tip` in its current epoch.
   * @param {string} tip
   * @param {string} device
   */
  counter(tip, device) {
    const epoch = this.displayEpoch(tip);
    return { epoch, counter: this.displays.get(tip)?.get(`${device}\u0000${stampKey(epoch)}`) ?? null };
  }

  /**
   * The invalidation register's value, if a write survives.
   * @returns {Eligibility | null}
   * @param {string} tip
   */
  eligibility(tip) {
    return this.tips.get(tip)?.eligibility?.value ?? null;
  }

  /**
   * A parameter's synced value, or `undefined` when none survives.
   * @param {string} id
   */
  parameterValue(id) {
    return this.parameters.get(id)?.value;
  }

  /**
   * The donations of `event`, oldest first.
   * @param {string} event
   * @returns {Donation[]}
   */
  donations(event) {
    return this.events.get(event)?.donations ?? [];
  }

  /**
   * Drops what an event's limit makes invisible for good at `nowMilliseconds`.
   * @param {string} event
   * @param {DonationLimit} limit
   * @param {number} nowMilliseconds
   */
  trimDonations(event, limit, nowMilliseconds) {
    const record = this.events.get(event);
    if (!record) return;
    if (limit.maximumCount !== undefined) record.pruneDominated(limit.maximumCount);
    if (limit.maximumAge !== undefined) {
      const threshold = nowMilliseconds - limit.maximumAge * 1000 - DONATION_AGE_GRACE_MILLISECONDS;
      record.removeWhere((donation) => donation.date < threshold);
    }
  }
}
