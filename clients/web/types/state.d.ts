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
export function donationPrecedes(a: {
    date: number;
    id: string;
}, b: {
    date: number;
    id: string;
}): boolean;
/**
 * Which donations of one event no future change can make visible (protocol.md §4.5): the indices of
 * those outranked, by (date, id), by at least `maximum` donations stamped no earlier. A deletion or
 * reset that removes any of those removes it too. A replica applies it with its catalog's
 * `maximumCount`; compaction with the 1000 every rule sees at most (§8).
 * @param {Stamp[]} stamps in rank order, lowest first
 * @param {number} maximum
 * @returns {Set<number>}
 */
export function dominatedDonations(stamps: Stamp[], maximum: number): Set<number>;
/** A rule sees at most an event's newest 1000 donations (protocol.md §4.5). */
export const QUERY_LIMIT: 1000;
/** How long past `maximumAge` a donation is still stored (a day), so clocks that differ agree. */
export const DONATION_AGE_GRACE_MILLISECONDS: 86400000;
/** An event's donations, sorted by (date, id), and its latest `deleteDonations()`. */
export class EventRecord {
    /** @type {Donation[]} */
    donations: Donation[];
    /** @type {Set<string>} */
    ids: Set<string>;
    /** @type {Stamp | null} */
    deletedAt: Stamp | null;
    /**
     * Inserts keeping (date, id) order; `false` when the id is already present.
     * @param {Donation} donation
     */
    insert(donation: Donation): boolean;
    /** @param {(donation: Donation) => boolean} predicate */
    removeWhere(predicate: (donation: Donation) => boolean): void;
    /**
     * Drops every donation no future change can make visible under a `maximumCount` limit: one
     * outranked, by (date, id), by at least `maximum` donations stamped no earlier than it. Which
     * donations this drops depends only on the set present, never on the order they came in.
     * @param {number} maximum
     */
    pruneDominated(maximum: number): void;
}
/** Everything a replica knows, as the merge of the changes it has seen. */
export class ReplicaState {
    /**
     * The latest `resetDatastore()`.
     * @type {Stamp | null}
     */
    datastoreReset: Stamp | null;
    /** @type {Map<string, {value: JSONValue, stamp: Stamp}>} */
    parameters: Map<string, {
        value: JSONValue;
        stamp: Stamp;
    }>;
    /** @type {Map<string, {eligibility: {value: Eligibility, stamp: Stamp} | null, resetStamp: Stamp | null}>} */
    tips: Map<string, {
        eligibility: {
            value: Eligibility;
            stamp: Stamp;
        } | null;
        resetStamp: Stamp | null;
    }>;
    /**
     * Per tip, per (device, epoch): cumulative display counters.
     * @type {Map<string, Map<string, DisplayCounter>>}
     */
    displays: Map<string, Map<string, DisplayCounter>>;
    /** @type {Map<string, EventRecord>} */
    events: Map<string, EventRecord>;
    /**
     * Milliseconds since 1970 of the latest display of any tip on any device.
     * @type {number | null}
     */
    lastDisplayAnywhere: number | null;
    /**
     * Merges one change; whether the state changed. Idempotent and order-independent.
     * @param {Change} change
     * @param {{[event: string]: DonationLimit}} donationLimits
     */
    apply(change: Change, donationLimits?: {
        [event: string]: DonationLimit;
    }): boolean;
    /**
     * The stamp that began `tip`'s current display epoch.
     * @returns {Stamp | null}
     * @param {string} tip
     */
    displayEpoch(tip: string): Stamp | null;
    /**
     * Displays of `tip` summed over every device, in its current epoch (summed in device order).
     * @param {string} tip
     */
    displayTotals(tip: string): {
        count: number;
        duration: number;
    };
    /**
     * Whether `tip` has ever been displayed on any device (since the last datastore reset).
     * @param {string} tip
     * @returns {boolean}
     */
    hasDisplayed(tip: string): boolean;
    /**
     * This device's counter for `tip` in its current epoch.
     * @param {string} tip
     * @param {string} device
     */
    counter(tip: string, device: string): {
        epoch: import("./hlc.js").Stamp | null;
        counter: DisplayCounter | null;
    };
    /**
     * The invalidation register's value, if a write survives.
     * @returns {Eligibility | null}
     * @param {string} tip
     */
    eligibility(tip: string): Eligibility | null;
    /**
     * A parameter's synced value, or `undefined` when none survives.
     * @param {string} id
     */
    parameterValue(id: string): import("./json.js").JSONValue | undefined;
    /**
     * The donations of `event`, oldest first.
     * @param {string} event
     * @returns {Donation[]}
     */
    donations(event: string): Donation[];
    /**
     * Drops what an event's limit makes invisible for good at `nowMilliseconds`.
     * @param {string} event
     * @param {DonationLimit} limit
     * @param {number} nowMilliseconds
     */
    trimDonations(event: string, limit: DonationLimit, nowMilliseconds: number): void;
    #private;
}
export type Stamp = import('./hlc.js').Stamp;
export type Change = import('./change.js').Change;
export type JSONValue = import('./json.js').JSONValue;
export type Eligibility = {
    state: 'eligible' | 'invalidated';
    reason?: string;
};
export type Donation = {
    id: string;
    date: number;
    info?: JSONValue;
    hasInfo: boolean;
    stamp: Stamp;
};
export type DonationLimit = {
    maximumCount?: number;
    maximumAge?: number;
};
export type DisplayCounter = {
    device: string;
    epoch: Stamp | null;
    count: number;
    duration: number;
    lastDisplayed: number;
};
