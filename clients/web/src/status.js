// A tip's status from the merged state, the catalog and the instant (protocol.md §4, "Status"):
// testing overrides, invalidation, display limits, the off switch, targeting, rules, the display
// frequency, the first-sync hold, an experiment's holdout. `reason` is that order, written once; `status` and `explain` read it.

import { RuleEvaluator, RuleEvaluationError, readsOf, ruleJSON } from './rules.js';
import { donationLimits } from './catalog.js';
import { bucket } from './bucket.js';
import { contextValue } from './context.js';
import { armOf, reachingArm, runningExperiment } from './experiment.js';
import { QUERY_LIMIT } from './state.js';

/**
 * @typedef {import('./state.js').ReplicaState} ReplicaState
 * @typedef {import('./catalog.js').Catalog} Catalog
 * @typedef {import('./catalog.js').TipDefinition} TipDefinition
 * @typedef {import('./json.js').JSONValue} JSONValue
 * @typedef {import('./rules.js').Rule} Rule
 * @typedef {'available' | 'pending' | `invalidated:${string}`} TipStatus
 * @typedef {{showAll?: boolean, hideAll?: boolean, shown?: string[], hidden?: string[]}} TestingOverrides
 * @typedef {{code: string, status: TipStatus, index?: number, count?: number, maximum?: number, duration?: number, allTips?: boolean, until?: number, experiment?: string, arm?: 'holdout' | null}} StatusReason
 *   Which step of "Status" decides (protocol.md §13.9): `code` is `testingOverride`, `invalidated`,
 *   `maxDisplayCount`, `maxDisplayDuration`, `turnedOff`, `targeting`, `rule`, `displayFrequency`,
 *   `firstSync`, `experiment` or `available`.
 */

export { QUERY_LIMIT };

/** Evaluates tip statuses over one state, at one instant. */
export class StatusEvaluator {
  /**
   * @param {ReplicaState} state
   * @param {Catalog} catalog
   * @param {number} now seconds since 1970
   * @param {{transientValues?: {[id: string]: JSONValue}, overrides?: TestingOverrides, heldForFirstSync?: boolean, context?: import('./context.js').DeviceContext}} options
   * `heldForFirstSync`: the device has not completed its first sync (protocol.md §17.1): a tip that
   * would be available is pending. `context`: what targeting reads (platform, appVersion, locale,
   * account; protocol.md §13.8).
   */
  constructor(state, catalog, now, { transientValues = {}, overrides = {}, heldForFirstSync = false, context = {} } = {}) {
    this.heldForFirstSync = heldForFirstSync;
    this.deviceContext = context;
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

  /**
   * A parameter's value: transient, synced, or its default (null when unknown).
   * @param {string} id
   * @returns {JSONValue}
   */
  parameterValue(id) {
    if (Object.prototype.hasOwnProperty.call(this.transientValues, id)) return this.transientValues[id];
    const synced = this.state.parameterValue(id);
    if (synced !== undefined) return synced;
    return this.defaults.get(id) ?? null;
  }

  /**
   * The donations of an event rules see: within its maximum age, the newest up to its count and 1000.
   * @param {string} event
   */
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

  /**
   * Whether every rule holds.
   * @param {Rule[]} rules
   */
  rulesHold(rules) {
    return this.firstFailing(rules) < 0;
  }

  /**
   * The index of the first rule that does not hold, or -1: a rule that fails to evaluate does not
   * hold (protocol.md §13.5).
   * @param {import('./rules.js').Rule[]} rules
   */
  firstFailing(rules) {
    const evaluator = new RuleEvaluator(this);
    return rules.findIndex((rule) => {
      try {
        return evaluator.holds(rule) !== true;
      } catch {
        return true;
      }
    });
  }

  /**
   * @param {TipDefinition} tip
   * @returns {TipStatus}
   */
  status(tip) {
    return this.reason(tip).status;
  }

  /**
   * Which step of "Status" decides the tip's status now, and with what: the one place the order of
   * the steps is written.
   * @param {TipDefinition} tip
   * @returns {StatusReason}
   */
  reason(tip) {
    const { showAll, hideAll, shown = [], hidden = [] } = this.overrides;
    if (shown.includes(tip.id)) return { code: 'testingOverride', status: 'available' };
    if (hidden.includes(tip.id)) return { code: 'testingOverride', status: 'pending' };
    if (showAll) return { code: 'testingOverride', status: 'available' };
    if (hideAll) return { code: 'testingOverride', status: 'pending' };
    const eligibility = this.state.eligibility(tip.id);
    if (eligibility?.state === 'invalidated') return { code: 'invalidated', status: `invalidated:${eligibility.reason}` };
    const totals = this.state.displayTotals(tip.id);
    if (tip.options.maxDisplayCount !== undefined && totals.count >= tip.options.maxDisplayCount) {
      return { code: 'maxDisplayCount', status: 'invalidated:displayCountExceeded', count: totals.count, maximum: tip.options.maxDisplayCount };
    }
    if (tip.options.maxDisplayDuration !== undefined && totals.duration >= tip.options.maxDisplayDuration) {
      return { code: 'maxDisplayDuration', status: 'invalidated:displayDurationExceeded', duration: totals.duration, maximum: tip.options.maxDisplayDuration };
    }
    if (this.catalog.enabled === false) return { code: 'turnedOff', status: 'pending', allTips: true };
    if (tip.enabled === false) return { code: 'turnedOff', status: 'pending', allTips: false };
    const targeting = this.firstFailing(tip.targeting ?? []);
    if (targeting >= 0) return { code: 'targeting', status: 'pending', index: targeting };
    const rule = this.firstFailing(tip.rules);
    if (rule >= 0) return { code: 'rule', status: 'pending', index: rule };
    const until = this.throttledUntil(tip);
    if (until !== null) return { code: 'displayFrequency', status: 'pending', until };
    if (this.heldForFirstSync) return { code: 'firstSync', status: 'pending' };
    const experiment = runningExperiment(tip);
    if (experiment) {
      const account = this.deviceContext.account;
      if (typeof account !== 'string') return { code: 'experiment', status: 'pending', experiment: experiment.id, arm: null };
      if (armOf(experiment, account) === 'holdout') return { code: 'experiment', status: 'pending', experiment: experiment.id, arm: 'holdout' };
    }
    return { code: 'available', status: 'available' };
  }

  /**
   * Why the tip has its status now, in protocol terms (protocol.md §13.9): `{tip, status, reason, …}`
   * with the rule that does not hold and the values it read, the invalidation's device and time, the
   * display totals and limit, or when display frequency lets go.
   * @param {TipDefinition} tip
   */
  explain(tip) {
    const reason = this.reason(tip);
    /** @type {{[member: string]: any}} */
    const explanation = { tip: tip.id, status: reason.status, reason: reason.code };
    switch (reason.code) {
      case 'invalidated': {
        const stamp = this.state.tips.get(tip.id)?.eligibility?.stamp;
        if (stamp) {
          explanation.invalidatedBy = stamp.device;
          explanation.invalidatedAt = parseInt(stamp.hlc.slice(0, 12), 16);
        }
        break;
      }
      case 'maxDisplayCount':
        explanation.count = reason.count;
        explanation.maximum = reason.maximum;
        break;
      case 'maxDisplayDuration':
        explanation.duration = reason.duration;
        explanation.maximum = reason.maximum;
        break;
      case 'turnedOff':
        explanation.scope = reason.allTips ? 'catalog' : 'tip';
        break;
      case 'targeting':
      case 'rule': {
        const rule = ((reason.code === 'targeting' ? tip.targeting : tip.rules) ?? [])[/** @type {number} */ (reason.index)];
        explanation.index = reason.index;
        explanation.expression = ruleJSON(rule);
        explanation.values = this.readValues(rule);
        try {
          new RuleEvaluator(this).holds(rule);
        } catch (error) {
          if (error instanceof RuleEvaluationError) explanation.error = error.message;
          else throw error;
        }
        break;
      }
      case 'displayFrequency':
        explanation.until = reason.until;
        break;
      case 'experiment':
        explanation.experiment = reason.experiment;
        explanation.arm = reason.arm;
        break;
    }
    return explanation;
  }

  /**
   * What a rule reads, by name: `param:ID`, `donations:ID` (how many rules see), `context:NAME`, `bucket:KEY`.
   * @param {Rule} rule
   */
  readValues(rule) {
    /** @type {{[name: string]: JSONValue}} */
    const values = {};
    for (const read of readsOf(rule)) {
      // Every read names what it reads (`readsOf`).
      const name = /** @type {string} */ (read.name);
      if (read.op === 'param') values[`param:${name}`] = this.parameterValue(name);
      else if (read.op === 'donations') values[`donations:${name}`] = this.donations(name).length;
      else if (read.op === 'context') values[`context:${name}`] = contextValue(this.deviceContext, name);
      else if (read.op === 'bucket') {
        const account = this.deviceContext.account;
        values[`bucket:${name}`] = typeof account === 'string' ? bucket(account, name) : null;
      }
    }
    return values;
  }

  /**
   * Whether the display frequency holds a never-shown tip back.
   * @param {TipDefinition} tip
   */
  isThrottled(tip) {
    return this.throttledUntil(tip) !== null;
  }

  /**
   * When the display frequency stops holding a never-shown tip back (milliseconds), or null.
   * @param {TipDefinition} tip
   * @returns {number | null}
   */
  throttledUntil(tip) {
    const interval = this.catalog.displayFrequency ?? 0;
    const last = this.state.lastDisplayAnywhere;
    if (tip.options.ignoresDisplayFrequency || interval <= 0 || this.state.hasDisplayed(tip.id) || last === null) return null;
    const until = last + interval * 1000;
    return this.now * 1000 < until ? until : null;
  }

  /**
   * The tip of a group whose reach showing the group now records (protocol.md §13.12): the current
   * tip as it would be if no experiment held a tip out, when it has a running experiment and a
   * reaching arm. A held-out tip is reached where the group would have shown it.
   * @param {TipDefinition[]} tips
   * @param {string} priority
   */
  tipReachedInGroup(tips, priority) {
    for (const tip of tips) {
      const reason = this.reason(tip);
      const account = this.deviceContext.account;
      if (reason.code === 'experiment' && reason.arm === 'holdout') return tip;
      if (reason.status === 'available') return reachingArm(tip, reason, account) !== null ? tip : null;
      if (reason.status === 'pending' && priority === 'ordered') return null;
    }
    return null;
  }

  /**
   * A group's current tip: the first available; `ordered` stops at the first pending.
   * @param {TipDefinition[]} tips
   * @param {string} priority
   */
  currentTip(tips, priority) {
    for (const tip of tips) {
      const status = this.status(tip);
      if (status === 'available') return tip;
      if (status === 'pending' && priority === 'ordered') return null;
    }
    return null;
  }
}
