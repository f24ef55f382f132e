// A device's tips engine: the merged state, its log in a store, its clock and device id, the
// catalog, and the TipKit-shaped operations (donate, parameters, invalidate, displays). What the
// sync client and the <tipsync-tip> element build on.

import { armOf, firstRecord, reachingArm, recordEvent, runningExperiment } from './experiment.js';
import { HybridLogicalClock, MAX_HLC_MILLISECONDS, formatHLC, parseHLC, stampKey } from './hlc.js';
import { ReplicaState } from './state.js';
import { StatusEvaluator } from './status.js';
import { donationLimits, forPlatform, parseCatalog } from './catalog.js';
import { MAX_INTEGER, canonicalText, object } from './json.js';
import { ChangeError, INVALIDATION_REASONS, sizeViolation, violation } from './change.js';
import { MemoryStore } from './store.js';
import { emptyProgress, firstSyncHolds, readProgress } from './progress.js';
import { superseded } from './compaction.js';

/**
 * @typedef {import('./change.js').Change} Change
 * @typedef {import('./catalog.js').Catalog} Catalog
 * @typedef {import('./catalog.js').TipDefinition} TipDefinition
 * @typedef {import('./status.js').TipStatus} TipStatus
 * @typedef {import('./status.js').TestingOverrides} TestingOverrides
 * @typedef {import('./store.js').ReplicaStore} ReplicaStore
 * @typedef {import('./progress.js').SyncProgress} SyncProgress
 * @typedef {import('./json.js').JSONValue} JSONValue
 * @typedef {import('./context.js').DeviceContext} DeviceContext
 */

const keyOf = (/** @type {Change} */ change) => `${change.device}\u0000${change.seq}`;

/** How often watches re-check statuses that change with time alone (the Swift library's period). */
export const TIME_REFRESH_MILLISECONDS = 2000;

/** One replica: a device's state, log, clock and catalog. Open with {@link Replica.open}. */
export class Replica {
  /**
   * Opens a replica over a store (in memory unless given), loading what it holds.
   * @param {{
   *   store?: ReplicaStore, device?: string, catalog?: Catalog | string, now?: () => number,
   *   overrides?: TestingOverrides, context?: DeviceContext
   * }} options `device`: the device id on first open (else a random UUID; later opens keep the stored
   *   one); `catalog`: the catalog bundled with the app; `now`: the physical clock, milliseconds;
   *   `context`: what targeting reads (protocol.md §13.8) — by default platform `web` and the page's
   *   `lang` (else `navigator.language`) as the locale.
   */
  static async open({ store = new MemoryStore(), device, catalog = { parameters: [], events: [], tips: [], groups: [] }, now = () => Date.now(), overrides = {}, context = {} } = {}) {
    const replica = new Replica(store, typeof catalog === 'string' ? parseCatalog(catalog) : catalog, now, overrides);
    const locale = globalThis.document?.documentElement?.lang || globalThis.navigator?.language || null;
    /**
     * What targeting reads about this device (protocol.md §13.8).
     * @type {DeviceContext}
     */
    replica.deviceContext = { platform: 'web', appVersion: null, locale, account: null, ...context };
    await replica.#load(device);
    return replica;
  }

  /**
   * The catalog as received: the server's when one was applied, else the bundled one.
   * @type {Catalog}
   */
  #catalog = { parameters: [], events: [], tips: [], groups: [] };
  /**
   * Its part for this device's platform, computed when first read.
   * @type {Catalog | null}
   */
  #catalogForPlatform = null;

  /**
   * The catalog in force on this device: the server's when one was applied, else the bundled one —
   * its tips for this device's platform, with the platform's settings (protocol.md §13.11).
   * @type {Catalog}
   */
  get catalog() {
    this.#catalogForPlatform ??= forPlatform(this.#catalog, this.deviceContext?.platform ?? null);
    return this.#catalogForPlatform;
  }

  set catalog(value) {
    this.#catalog = value;
    this.#catalogForPlatform = null;
  }

  /**
   * @private
   * @param {ReplicaStore} store
   * @param {Catalog} catalog
   * @param {() => number} now
   * @param {TestingOverrides} overrides
   */
  constructor(store, catalog, now, overrides) {
    /** @type {ReplicaStore} */
    this.store = store;
    /**
     * The catalog bundled with the app.
     * @type {Catalog}
     */
    this.bundledCatalog = catalog;
    /**
     * The catalog in force: the server's when one was applied, else the bundled one.
     * @type {Catalog}
     */
    this.catalog = catalog;
    this.physicalNow = now;
    /** @type {TestingOverrides} */
    this.overrides = overrides;
    /** @type {{[id: string]: JSONValue}} */
    this.transientValues = object();
    /** @type {Set<() => void>} */
    this.listeners = new Set();
    /** @type {Set<() => void>} */
    this.localListeners = new Set();
    /** @type {Set<() => void>} */
    this.progressListeners = new Set();
    /** @type {Promise<void>} */
    this.commits = Promise.resolve();
    /**
     * The checks of every {@link watch}, run by one shared timer.
     * @type {Set<() => void>}
     */
    this.timeChecks = new Set();
    /** @type {ReturnType<typeof setInterval> | null} */
    this.timeTicker = null;
    // What `open` loads from the store before it hands the replica out; declared here so that
    // every field has its type from the start.
    /**
     * What targeting reads about this device (protocol.md §13.8); set by {@link Replica.open}.
     * @type {DeviceContext}
     */
    this.deviceContext = { platform: 'web', appVersion: null, locale: null, account: null };
    /**
     * This device's id (a UUID unless given on first open).
     * @type {string}
     */
    this.deviceID = '';
    /**
     * The sync bookkeeping.
     * @type {SyncProgress}
     */
    this.progress = emptyProgress();
    /**
     * The highest stamp seen.
     * @type {string}
     */
    this.observedHLC = formatHLC(0, 0);
    /**
     * The server's catalog as last applied, and its version.
     * @type {{text: string, tag: string} | null}
     */
    this.serverCatalog = null;
    /**
     * Every change held, by (device, seq).
     * @type {Map<string, Change>}
     */
    this.log = new Map();
    /**
     * This device's changes, by seq.
     * @type {Change[]}
     */
    this.local = [];
    /**
     * The merged state of every change held.
     * @type {ReplicaState}
     */
    this.state = new ReplicaState();
    /**
     * This device's clock.
     * @type {HybridLogicalClock}
     */
    this.hlc = new HybridLogicalClock(this.observedHLC);
  }

  /** @param {string | undefined} preferredDevice */
  async #load(preferredDevice) {
    const { changes, meta } = await this.store.load();
    this.deviceID = meta.device ?? preferredDevice ?? globalThis.crypto.randomUUID();
    this.progress = readProgress(meta.progress);
    this.observedHLC = meta.observedHLC ?? formatHLC(0, 0);
    this.serverCatalog = meta.serverCatalog ?? null;
    if (typeof meta.account === 'string') this.deviceContext = { ...this.deviceContext, account: meta.account };
    if (this.serverCatalog) {
      try {
        this.catalog = parseCatalog(this.serverCatalog.text);
      } catch {
        this.serverCatalog = null;
      }
    }
    this.#rebuild(changes);
    if (!meta.device) await this.#commit({ meta: { device: this.deviceID } });
  }

  /**
   * Rebuilds the state, the clock and the local log from a set of changes.
   * @param {Change[]} changes
   */
  #rebuild(changes) {
    this.state = new ReplicaState();
    this.log = new Map();
    this.local = [];
    let latest = this.observedHLC;
    const limits = donationLimits(this.catalog);
    for (const change of changes) {
      if (this.log.has(keyOf(change))) continue;
      this.log.set(keyOf(change), change);
      this.state.apply(change, limits);
      if (change.device === this.deviceID) this.local.push(change);
      if (change.hlc > latest) latest = change.hlc;
    }
    this.local.sort((a, b) => a.seq - b.seq);
    this.hlc = new HybridLogicalClock(latest);
  }

  /**
   * Stores an update after the ones before it; memory already holds it.
   * @param {Parameters<ReplicaStore['commit']>[0]} update
   * @returns {Promise<void>}
   */
  #commit(update) {
    const next = this.commits.then(() => this.store.commit(update));
    this.commits = next.catch(() => {});
    return next;
  }

  /** Milliseconds since 1970 on the corrected clock (the server's idea of time). */
  nowMilliseconds() {
    return Math.min(Math.max(0, Math.floor(this.physicalNow() + this.progress.clockOffset)), MAX_HLC_MILLISECONDS);
  }

  /** The sequence number of this device's latest change (0 before any). */
  get lastLocalSeq() {
    return this.local.length ? this.local[this.local.length - 1].seq : 0;
  }

  /**
   * Calls `listener` after every change of state (local, merged, catalog).
   * @returns {() => void} unsubscribe
   * @param {() => void} listener
   */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Calls `listener` after every local change is stored (what wakes a push).
   * @returns {() => void}
   * @param {() => void} listener
   */
  onLocalChange(listener) {
    this.localListeners.add(listener);
    return () => this.localListeners.delete(listener);
  }

  /**
   * Calls `listener` after every change of the sync bookkeeping (an answer settled).
   * @returns {() => void}
   * @param {() => void} listener
   */
  onProgress(listener) {
    this.progressListeners.add(listener);
    return () => this.progressListeners.delete(listener);
  }

  /** @param {SyncProgress} [before] the bookkeeping before the change: a first-sync hold that moved re-evaluates tips */
  #notifyProgress(before) {
    for (const listener of [...this.progressListeners]) listener();
    if (before && (before.hasSynced !== this.progress.hasSynced || before.firstSyncHoldUntil !== this.progress.firstSyncHoldUntil)) {
      this.#notify();
    }
  }

  /**
   * Resolves true once this replica has completed its first sync (a pull reached the end of the
   * account's log, here or in the tab that syncs), false when `timeout` milliseconds pass first.
   * @param {number} timeout
   * @returns {Promise<boolean>}
   */
  waitForFirstSync(timeout) {
    if (this.progress.hasSynced) return Promise.resolve(true);
    return new Promise((resolve) => {
      const stop = this.onProgress(() => {
        if (!this.progress.hasSynced) return;
        stop();
        clearTimeout(timer);
        resolve(true);
      });
      const timer = setTimeout(() => {
        stop();
        resolve(false);
      }, timeout);
    });
  }

  /** Whether tips are held for the first sync now (protocol.md §17.1). */
  get isHeldForFirstSync() {
    return firstSyncHolds(this.progress, this.nowMilliseconds());
  }

  /**
   * Starts the first-sync hold (what a sync client does as it starts): unless this replica has synced,
   * tips that would be available stay pending for at most `seconds`, or until the first pull completes.
   * The bookkeeping changes at once, before the returned promise (its storing) settles.
   * @param {number} seconds
   * @returns {Promise<boolean>} whether tips are held
   */
  holdForFirstSync(seconds) {
    const wait = Number.isFinite(seconds) ? Math.min(Math.max(0, seconds), 86_400) : 0;
    const until = this.nowMilliseconds() + Math.round(wait * 1000);
    return this.updateProgress((progress) => {
      progress.firstSyncHoldUntil = !progress.hasSynced && wait > 0 ? until : null;
      return progress.firstSyncHoldUntil !== null;
    });
  }

  #notify() {
    for (const listener of [...this.listeners]) listener();
  }

  /**
   * Makes local changes from `operations` (each the kind-specific members), merges and stores them.
   * @param {(nextSeq: number, now: number) => Array<{[member: string]: any}>} make
   */
  async #local(make) {
    const now = this.nowMilliseconds();
    const operations = make(this.lastLocalSeq + 1, now);
    if (operations.length === 0) return [];
    const limits = donationLimits(this.catalog);
    const changes = operations.map((operation, offset) => {
      const change = /** @type {Change} */ ({
        device: this.deviceID, seq: this.lastLocalSeq + 1 + offset, hlc: this.hlc.tick(now), unknown: object(), ...operation,
      });
      const problem = violation(change) ?? sizeViolation(change);
      if (problem) throw problem;
      return change;
    });
    for (const change of changes) {
      this.log.set(keyOf(change), change);
      this.local.push(change);
      this.state.apply(change, limits);
    }
    await this.#commit({ changes });
    this.#notify();
    for (const listener of [...this.localListeners]) listener();
    return changes;
  }

  /**
   * Donates to an event now, with an optional JSON payload.
   * @param {string} event
   * @param {JSONValue} [info]
   */
  donate(event, info) {
    return this.#local((seq, now) => [
      info === undefined
        ? { kind: 'donation', event, id: `${this.deviceID}:${seq}`, date: now, hasInfo: false }
        : { kind: 'donation', event, id: `${this.deviceID}:${seq}`, date: now, hasInfo: true, info },
    ]);
  }

  /**
   * Sets a parameter: synced, or kept in memory when the catalog declares it transient.
   * @param {string} id
   * @param {JSONValue} value
   */
  async setParameter(id, value) {
    if (this.catalog.parameters.find((parameter) => parameter.id === id)?.transient) {
      this.transientValues[id] = value;
      this.#notify();
      return [];
    }
    return this.#local(() => [{ kind: 'parameter', id, value }]);
  }

  /**
   * A parameter's value: transient, synced, or its default (null when unknown).
   * @param {string} id
   * @returns {JSONValue}
   */
  parameterValue(id) {
    return this.evaluator().parameterValue(id);
  }

  /**
   * Invalidates a tip everywhere (`tipClosed` by default: the person closed it).
   * @param {string} tip
   * @param {string} [reason]
   */
  invalidate(tip, reason = 'tipClosed') {
    if (!INVALIDATION_REASONS.includes(reason)) throw new ChangeError('reason', `unknown invalidation reason '${reason}'`);
    return this.#local(() => [{ kind: 'eligibility', tip, state: 'invalidated', reason }]);
  }

  /**
   * Makes an invalidated tip eligible again and starts a new display epoch.
   * @param {string} tip
   */
  resetEligibility(tip) {
    return this.#local(() => [{ kind: 'eligibility', tip, state: 'eligible' }]);
  }

  /**
   * Records that a tip was on screen once, for `duration` seconds.
   * @param {string} tip
   * @param {number} [duration]
   */
  recordDisplay(tip, duration = 0) {
    return this.#local((seq, now) => {
      const { epoch, counter } = this.state.counter(tip, this.deviceID);
      const added = Number.isFinite(duration) ? Math.max(0, duration) : 0;
      /** @type {{[member: string]: any}} */
      const operation = {
        kind: 'display', tip, epoch, count: Math.min(counter?.count ?? 0, MAX_INTEGER - 1) + 1,
        duration: Math.min((counter?.duration ?? 0) + added, MAX_INTEGER), lastDisplayed: Math.max(counter?.lastDisplayed ?? 0, now),
      };
      return [operation, ...this.#experimentRecordsForDisplay(tip, seq + 1, now)];
    });
  }

  /**
   * The donations a display adds outside the holdout of the tip's running experiment (protocol.md
   * §13.12): reach if the account has none yet, and exposure if it has none.
   * @param {string} id
   * @param {number} firstSeq
   * @param {number} now
   */
  #experimentRecordsForDisplay(id, firstSeq, now) {
    const tip = this.tip(id);
    const experiment = tip && runningExperiment(tip);
    const account = this.deviceContext?.account;
    if (!experiment || typeof account !== 'string') return [];
    const arm = armOf(experiment, account);
    if (arm === 'holdout') return [];
    return /** @type {('reach' | 'exposure')[]} */ (['reach', 'exposure'])
      .filter((record) => firstRecord(record, experiment, this.state) === undefined)
      .map((record, offset) => ({
        kind: 'donation', event: recordEvent(record, experiment), id: `${this.deviceID}:${firstSeq + offset}`, date: now,
        hasInfo: true, info: { arm, tip: id },
      }));
  }

  /**
   * The arm whose reach asking the tip's status now would record (protocol.md §13.12): the tip has a
   * running experiment, would be shown now (treatment) or is held back only by the holdout, and the
   * account has no reach yet. `null`: nothing to record.
   * @returns {import('./experiment.js').Arm | null}
   * @param {string} id
   */
  reachDue(id) {
    const tip = this.tip(id);
    const experiment = tip && runningExperiment(tip);
    if (!experiment || firstRecord('reach', experiment, this.state) !== undefined) return null;
    return reachingArm(tip, this.evaluator().reason(tip), this.deviceContext?.account);
  }

  /**
   * Records the tip's reach if due (``reachDue``): what an app's asking "show it now?" writes.
   * @param {string} id
   */
  recordReach(id) {
    return this.#local((seq, now) => {
      const arm = this.reachDue(id);
      if (arm === null) return [];
      const experiment = /** @type {import('./experiment.js').TipExperiment} */ (this.tip(id)?.experiment);
      return [{ kind: 'donation', event: recordEvent('reach', experiment), id: `${this.deviceID}:${seq}`, date: now, hasInfo: true, info: { arm, tip: id } }];
    });
  }

  /**
   * Deletes every donation of an event, on every device.
   * @param {string} event
   */
  deleteDonations(event) {
    return this.#local(() => [{ kind: 'donationsDeleted', event }]);
  }

  /** Removes every tip, event and parameter record, on every device. */
  resetDatastore() {
    this.transientValues = object();
    return this.#local(() => [{ kind: 'datastoreReset' }]);
  }

  /**
   * Merges changes from other devices, and `update` to the sync bookkeeping, stored together.
   * @template T
   * @param {Change[]} changes
   * @param {(progress: SyncProgress) => T} [update]
   * @returns {Promise<T | undefined>} what `update` returned (`undefined` without one)
   */
  async applyRemote(changes, update) {
    const before = this.progress;
    const progress = structuredClone(this.progress);
    const result = update ? update(progress) : undefined;
    this.progress = progress;
    const limits = donationLimits(this.catalog);
    const now = this.nowMilliseconds();
    const added = [];
    let changed = false;
    let latest = this.observedHLC;
    let ownAdded = false;
    for (const change of changes) {
      if (this.log.has(keyOf(change))) continue;
      this.hlc.observe(change.hlc, now);
      if (change.hlc > latest) latest = change.hlc;
      this.log.set(keyOf(change), change);
      added.push(change);
      // This device's own changes the replica does not hold: made before its storage was cleared
      // (see SyncClient's first contact), they are its log again.
      if (change.device === this.deviceID) {
        this.local.push(change);
        ownAdded = true;
      }
      if (this.state.apply(change, limits)) changed = true;
    }
    if (ownAdded) this.local.sort((a, b) => a.seq - b.seq);
    this.observedHLC = latest;
    await this.#commit({ changes: added, meta: { progress, observedHLC: latest } });
    if (changed) this.#notify();
    this.#notifyProgress(changed ? undefined : before);
    return result;
  }

  /**
   * Changes the sync bookkeeping and stores it.
   * @template T
   * @param {(progress: SyncProgress) => T} update
   */
  async updateProgress(update) {
    const before = this.progress;
    const progress = structuredClone(this.progress);
    const result = update(progress);
    this.progress = progress;
    const stored = this.#commit({ meta: { progress } });
    this.#notifyProgress(before);
    await stored;
    return result;
  }

  /**
   * Gives this device's changes numbers after `highestSeq` (the server already holds a log of this
   * device that this replica does not: its storage was cleared), donation ids with them, and marks
   * `highestSeq` acknowledged. Only for changes no server holds (none was ever acknowledged).
   * @param {number} highestSeq
   */
  async renumberAfter(highestSeq) {
    const shift = highestSeq;
    const previous = this.local;
    const renumbered = this.local.map((change) => {
      const copy = { ...change, seq: change.seq + shift };
      if (copy.kind === 'donation') copy.id = `${copy.device}:${copy.seq}`;
      return copy;
    });
    const remote = [...this.log.values()].filter((change) => change.device !== this.deviceID);
    this.#rebuild([...remote, ...renumbered]);
    this.progress = { ...this.progress, pushedSeq: highestSeq, acknowledgedHighSeq: Math.max(this.progress.acknowledgedHighSeq, highestSeq) };
    await this.#commit({ remove: previous, changes: renumbered, meta: { progress: this.progress } });
    this.#notify();
  }

  /**
   * Sets aside this device's change `seq`, which the server refused (`422 invalid_change`,
   * protocol.md §17.2), when no server can hold it (above every acknowledged or unanswered push):
   * it leaves the log, its effect is undone, and the unsent changes after it move down one sequence
   * number (a donation's id follows its number), so the outbox pushes on. Returns the change set
   * aside, or null when it may be on a server (then nothing changes).
   * @param {number} seq
   * @returns {Promise<Change | null>}
   */
  async setAsideUnsent(seq) {
    const held = Math.max(this.progress.acknowledgedHighSeq, this.progress.uncertainPush?.seq ?? 0);
    const refused = this.local.find((change) => change.seq === seq);
    if (seq <= held || !refused) return null;
    const previous = this.local.filter((change) => change.seq >= seq);
    const renumbered = previous.filter((change) => change.seq > seq).map((change) => {
      const copy = { ...change, seq: change.seq - 1 };
      if (copy.kind === 'donation') copy.id = `${copy.device}:${copy.seq}`;
      return copy;
    });
    const kept = [...this.log.values()].filter((change) => change.device !== this.deviceID || change.seq < seq);
    this.#rebuild([...kept, ...renumbered]);
    await this.#commit({ remove: previous, changes: renumbered });
    this.#notify();
    return refused;
  }

  /** This device's changes not yet acknowledged, oldest first. */
  outbox(limit = 1000) {
    return this.local.filter((change) => change.seq > this.progress.pushedSeq).slice(0, limit);
  }

  /**
   * After `clock_skew` (protocol.md §10, §11): re-stamps every local change another device cannot
   * hold (above the acknowledged high mark and `keep`) from the corrected clock, moving payload times
   * back with the stamps, rebuilds the state and forgets the pull cursor.
   */
  async restampUnacknowledged(keep = 0) {
    const acknowledged = Math.max(this.progress.acknowledgedHighSeq, keep);
    const kept = this.local.filter((change) => change.seq <= acknowledged);
    const clock = new HybridLogicalClock(kept.reduce((latest, change) => (change.hlc > latest ? change.hlc : latest), formatHLC(0, 0)));
    clock.observe(this.observedHLC, 0);
    /** @type {Map<string, import('./hlc.js').Stamp>} */
    const renamed = new Map();
    const restamped = this.local
      .filter((change) => change.seq > acknowledged)
      .map((change) => {
        const old = { hlc: change.hlc, device: change.device };
        const hlc = clock.tick(this.nowMilliseconds());
        renamed.set(stampKey(old), { hlc, device: change.device });
        const back = Math.min(0, parseHLC(hlc).milliseconds - parseHLC(old.hlc).milliseconds);
        const moved = (/** @type {number} */ time) => Math.max(0, time + back);
        const copy = { ...change, hlc };
        if (copy.kind === 'display') {
          copy.lastDisplayed = moved(/** @type {number} */ (copy.lastDisplayed));
          if (copy.epoch) copy.epoch = renamed.get(stampKey(copy.epoch)) ?? copy.epoch;
        }
        if (copy.kind === 'donation') copy.date = moved(/** @type {number} */ (copy.date));
        return copy;
      });
    const remote = [...this.log.values()].filter((change) => change.device !== this.deviceID);
    this.#rebuild([...remote, ...kept, ...restamped]);
    this.hlc = clock;
    this.progress = { ...this.progress, pullCursor: null };
    await this.#commit({ replace: restamped, meta: { progress: this.progress } });
    this.#notify();
  }

  /** Drops log entries compaction makes unneeded (protocol.md §8), keeping this device's unsent ones. */
  compact() {
    const entries = [...this.log.values()].map((change, position) => ({ position, change }));
    const dropped = superseded(entries);
    for (const { position, change } of entries) {
      if (dropped.has(position) && !(change.device === this.deviceID && change.seq > this.progress.pushedSeq)) {
        this.log.delete(keyOf(change));
      }
    }
  }

  /**
   * Applies the server's catalog (protocol.md §16): validated first, refused whole if invalid (the
   * replica keeps its catalog); stored for offline starts.
   * @param {string} text
   * @param {string} tag
   */
  async applyServerCatalog(text, tag) {
    const catalog = parseCatalog(text);
    this.catalog = catalog;
    this.serverCatalog = { text, tag };
    await this.#commit({ meta: { serverCatalog: this.serverCatalog } });
    this.#rebuild([...this.log.values()]);
    this.#notify();
  }

  /**
   * Changes what targeting reads about this device (protocol.md §13.8): `platform`, `appVersion`,
   * `locale`; local, never synced.
   * @param {DeviceContext} context
   */
  setContext(context) {
    this.deviceContext = { ...this.deviceContext, ...context };
    this.#catalogForPlatform = null;
    this.#notify();
  }

  /**
   * Records the account's name (what rollout buckets hash; the sync client asks the server) and keeps it.
   * @param {string} name
   */
  async setAccount(name) {
    if (this.deviceContext.account === name) return;
    this.deviceContext = { ...this.deviceContext, account: name };
    await this.#commit({ meta: { account: name } });
    this.#notify();
  }

  /**
   * Why a tip has its status now (protocol.md §13.9): `{tip, status, reason, …}` — the rule or
   * targeting condition that does not hold with the values it read, who dismissed it and when, the
   * display totals and limit, until when display frequency holds it. `null` for an unknown tip.
   * @param {string} id
   */
  explain(id) {
    const tip = this.tip(id);
    return tip ? this.evaluator().explain(tip) : null;
  }

  /**
   * Sets testing overrides (local only, never synced) and re-evaluates.
   * @param {TestingOverrides} overrides
   */
  setOverrides(overrides) {
    this.overrides = overrides;
    this.#notify();
  }

  /**
   * Takes the state another tab of this device holds (it writes the log and syncs; this one follows):
   * its changes, bookkeeping and server catalog, in memory only.
   * @param {Change[]} changes
   * @param {Partial<SyncProgress> | undefined} progress
   * @param {{text: string, tag: string} | null} serverCatalog
   */
  adopt(changes, progress, serverCatalog) {
    this.progress = readProgress(progress);
    this.#notifyProgress();
    if (serverCatalog && serverCatalog.tag !== this.serverCatalog?.tag) {
      try {
        this.catalog = parseCatalog(serverCatalog.text);
        this.serverCatalog = serverCatalog;
      } catch {
        // keep the catalog in force
      }
    }
    this.#rebuild(changes);
    this.#notify();
  }

  /**
   * Takes the sync bookkeeping another tab of this device holds (in memory only).
   * @param {Partial<SyncProgress> | undefined} progress
   */
  adoptProgress(progress) {
    const before = this.progress;
    this.progress = readProgress(progress);
    this.#notifyProgress(before);
  }

  /** Reads what another tab (or process) stored and adopts it. */
  async reload() {
    const { changes, meta } = await this.store.load();
    this.progress = readProgress(meta.progress);
    this.observedHLC = meta.observedHLC ?? this.observedHLC;
    if (typeof meta.account === 'string') this.deviceContext = { ...this.deviceContext, account: meta.account };
    if (meta.serverCatalog && meta.serverCatalog.tag !== this.serverCatalog?.tag) {
      try {
        this.catalog = parseCatalog(meta.serverCatalog.text);
        this.serverCatalog = meta.serverCatalog;
      } catch {
        // keep the catalog in force
      }
    }
    const before = canonicalText(this.#summary());
    this.#rebuild(changes);
    if (canonicalText(this.#summary()) !== before) this.#notify();
  }

  #summary() {
    return [this.log.size, this.lastLocalSeq, this.catalog.tips.map((tip) => tip.id)];
  }

  /** A status evaluator at `now` (milliseconds on the corrected clock). */
  evaluator(now = this.nowMilliseconds()) {
    return new StatusEvaluator(this.state, this.catalog, now / 1000, {
      transientValues: this.transientValues, overrides: this.overrides, heldForFirstSync: firstSyncHolds(this.progress, now),
      context: this.deviceContext,
    });
  }

  /**
   * A tip's definition from the catalog in force.
   * @returns {TipDefinition | undefined}
   * @param {string} id
   */
  tip(id) {
    return this.catalog.tips.find((tip) => tip.id === id);
  }

  /**
   * A tip's status now: `available`, `pending` or `invalidated:<reason>`; `pending` for an unknown tip.
   * @returns {TipStatus}
   * @param {string} id
   */
  status(id) {
    const tip = this.tip(id);
    return tip ? this.evaluator().status(tip) : 'pending';
  }

  /**
   * A group's current tip (its first available one; `ordered` stops at the first pending).
   * @param {string} groupID
   */
  currentTip(groupID) {
    const group = this.catalog.groups.find((candidate) => candidate.id === groupID);
    if (!group) return null;
    const tips = group.tips.map((id) => this.tip(id)).filter(/** @returns {tip is TipDefinition} */ (tip) => tip !== undefined);
    return this.evaluator().currentTip(tips, group.priority);
  }

  /**
   * The id of the tip of a group whose reach showing the group now would record (`null`: none due).
   * @param {string} groupID
   */
  groupReachDue(groupID) {
    const group = this.catalog.groups.find((candidate) => candidate.id === groupID);
    if (!group) return null;
    const tips = group.tips.map((id) => this.tip(id)).filter(/** @returns {tip is TipDefinition} */ (tip) => tip !== undefined);
    const reached = this.evaluator().tipReachedInGroup(tips, group.priority);
    return reached && this.reachDue(reached.id) !== null ? reached.id : null;
  }

  /**
   * A tip's status as it changes: calls `listener` with the current status, then with every new one
   * (changes, and time passing — a display frequency ending, a window sliding, the first-sync hold's
   * bound — checked every {@link TIME_REFRESH_MILLISECONDS} by one timer shared by every watch, so a
   * page at rest wakes once per period however many tips it shows). `onCheck` is called at every
   * check, before the status is read.
   * @returns {() => void} stop
   * @param {string} id
   * @param {(status: TipStatus) => void} listener
   * @param {() => void} [onCheck]
   */
  watch(id, listener, onCheck = () => {}) {
    let last = this.status(id);
    listener(last);
    const check = () => {
      onCheck();
      const status = this.status(id);
      if (status !== last) {
        last = status;
        listener(status);
      }
    };
    const unsubscribe = this.subscribe(check);
    this.timeChecks.add(check);
    this.timeTicker ??= setInterval(() => {
      for (const each of [...this.timeChecks]) each();
    }, TIME_REFRESH_MILLISECONDS);
    return () => {
      unsubscribe();
      this.timeChecks.delete(check);
      if (this.timeChecks.size === 0 && this.timeTicker !== null) {
        clearInterval(this.timeTicker);
        this.timeTicker = null;
      }
    };
  }

  /**
   * A tip's statuses as an async iterator (the current one first).
   * @param {string} id
   */
  async *statusUpdates(id) {
    /** @type {TipStatus[]} */
    const queue = [];
    /** @type {((value: void) => void) | null} */
    let wake = null;
    const stop = this.watch(id, (status) => {
      queue.push(status);
      wake?.();
    });
    try {
      for (;;) {
        while (queue.length) yield queue.shift();
        await new Promise((resolve) => (wake = resolve));
        wake = null;
      }
    } finally {
      stop();
    }
  }
}

