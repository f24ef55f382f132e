// A tip's status from the merged state, the catalog and the instant (protocol.md §13): testing
// overrides, invalidation, display limits, rules, then the display frequency.

import { RuleEvaluator } from './rules.js';
import { donationLimits } from './catalog.js';

/**
 * @typedef {import('./state.js').ReplicaState} ReplicaState
 * @typedef {import('./catalog.js').Catalog} Catalog
 * @typedef {import('./catalog.js').TipDefinition} TipDefinition
 * @typedef {import('./json.js').JSONValue} JSONValue
 * @typedef {'available' | 'pending' | `invalidated:${string}`} TipStatus
 * @typedef {{showAll?: boolean, hideAll?: boolean, shown?: string[], hidden?: string[]}} TestingOverrides
 */

/** Rules see at most this many donations of an event (TipKit's rule). */
export const QUERY_LIMIT = 1000;

/** Evaluates tip statuses over one state, at one instant. */
export class StatusEvaluator {
  /**
   * @param {ReplicaState} state
   * @param {Catalog} catalog
   * @param {number} now seconds since 1970
   * @param {{transientValues?: {[id: string]: JSONValue}, overrides?: TestingOverrides, heldForFirstSync?: boolean}} options
   * `heldForFirstSync`: the device has not completed its first sync (protocol.md §17.1): a tip that
   * would be available is pending.
   */
  constructor(state, catalog, now, { transientValues = {}, overrides = {}, heldForFirstSync = false } = {}) {
    this.heldForFirstSync = heldForFirstSync;
    this.state = state;
    this.catalog = catalog;
    this.now = now;
    this.transientValues = transientValues;
    this.overrides = overrides;
    this.limits = donationLimits(catalog);
    /** @type {Map<string, JSONValue>} */
    this.defaults = new Map();
    for (const parameter of catalog.parameters) if (!this.defaults.has(parameter.id)) this.defaults.set(parameter.id, parameter.defaultValue);
  }

  /** A parameter's value: transient, synced, or its default (null when unknown). */
  parameterValue(id) {
    if (Object.prototype.hasOwnProperty.call(this.transientValues, id)) return this.transientValues[id];
    const synced = this.state.parameterValue(id);
    if (synced !== undefined) return synced;
    return this.defaults.has(id) ? this.defaults.get(id) : null;
  }

  /** The donations of an event rules see: within its maximum age, the newest up to its count and 1000. */
  donations(event) {
    let visible = this.state.donations(event);
    const limit = this.limits[event];
    if (limit?.maximumAge !== undefined) {
      const threshold = Math.ceil((this.now - limit.maximumAge) * 1000);
      const first = visible.findIndex((donation) => donation.date >= threshold);
      visible = first < 0 ? [] : visible.slice(first);
    }
    const keep = Math.min(QUERY_LIMIT, limit?.maximumCount ?? Infinity);
    return keep === 0 ? [] : visible.slice(-keep);
  }

  /** Whether every rule holds (a rule that fails to evaluate does not). */
  rulesHold(rules) {
    const evaluator = new RuleEvaluator(this);
    return rules.every((rule) => {
      try {
        return evaluator.holds(rule);
      } catch {
        return false;
      }
    });
  }

  /** @param {TipDefinition} tip @returns {TipStatus} */
  status(tip) {
    const { showAll, hideAll, shown = [], hidden = [] } = this.overrides;
    if (shown.includes(tip.id)) return 'available';
    if (hidden.includes(tip.id)) return 'pending';
    if (showAll) return 'available';
    if (hideAll) return 'pending';
    const eligibility = this.state.eligibility(tip.id);
    if (eligibility?.state === 'invalidated') return `invalidated:${eligibility.reason}`;
    const totals = this.state.displayTotals(tip.id);
    if (tip.options.maxDisplayCount !== undefined && totals.count >= tip.options.maxDisplayCount) return 'invalidated:displayCountExceeded';
    if (tip.options.maxDisplayDuration !== undefined && totals.duration >= tip.options.maxDisplayDuration) {
      return 'invalidated:displayDurationExceeded';
    }
    if (!this.rulesHold(tip.rules)) return 'pending';
    if (this.isThrottled(tip)) return 'pending';
    if (this.heldForFirstSync) return 'pending';
    return 'available';
  }

  /** Whether the display frequency holds a never-shown tip back. */
  isThrottled(tip) {
    const interval = this.catalog.displayFrequency ?? 0;
    const last = this.state.lastDisplayAnywhere;
    if (tip.options.ignoresDisplayFrequency || interval <= 0 || this.state.hasDisplayed(tip.id) || last === null) return false;
    return this.now * 1000 < last + interval * 1000;
  }

  /** A group's current tip: the first available; `ordered` stops at the first pending. */
  currentTip(tips, priority) {
    for (const tip of tips) {
      const status = this.status(tip);
      if (status === 'available') return tip;
      if (status === 'pending' && priority === 'ordered') return null;
    }
    return null;
  }
}
