// The app-facing API, shaped like TipKit's `Tips`: configure once, then ask tips for their status,
// donate, set parameters, invalidate. In a browser the replica lives in IndexedDB and one tab per
// device syncs (Web Locks); the other tabs send their writes to it and follow its state
// (BroadcastChannel), so a device never has two writers of its log.

import { contentFor } from './experiment.js';
import { Replica } from './replica.js';
import { SyncClient } from './sync.js';
import { IndexedDBStore, MemoryStore } from './store.js';
import { decodeChange, encodeChange } from './change.js';
import { localized } from './localization.js';
import { messageOf } from './message.js';

/**
 * @typedef {import('./catalog.js').Catalog} Catalog
 * @typedef {import('./status.js').TipStatus} TipStatus
 * @typedef {import('./status.js').TestingOverrides} TestingOverrides
 * @typedef {import('./json.js').JSONValue} JSONValue
 * @typedef {{
 *   device: string,
 *   catalog?: Catalog | string,
 *   server?: string,
 *   token?: string,
 *   tokenProvider?: () => Promise<string>,
 *   followsServerCatalog?: boolean,
 *   storage?: 'indexeddb' | 'memory',
 *   name?: string,
 *   overrides?: TestingOverrides,
 *   live?: boolean,
 *   firstSyncTimeout?: number,
 *   symbols?: Record<string, string>,
 *   context?: import('./context.js').DeviceContext,
 * }} TipSyncOptions
 * `device`: the device name the token was made for (protocol.md §6); `server` and a token turn sync
 * on; `storage`: IndexedDB by default where it exists; `name`: the store's name (one per device);
 * `firstSyncTimeout`: seconds a device that never synced holds back tips that would be available
 * (default 5, 0: no hold; protocol.md §17.1); `symbols`: image files for the symbol names tips'
 * `image` may carry (`{star: 'icons/star.svg'}`; protocol.md §13.1, "Images") — `<tipsync-tip>`
 * shows a symbol it cannot map as no image; `context`: what targeting reads (`{platform, appVersion,
 * locale}`; protocol.md §13.8) — platform `web` and the page's `lang` unless given.
 * @typedef {import('./sync.js').SyncStatus} SyncStatus
 * @typedef {'donate' | 'setParameter' | 'invalidate' | 'resetEligibility' | 'recordDisplay' | 'deleteDonations' | 'resetDatastore' | 'recordReach'} WriteOperation
 *   a write another tab may ask the syncing tab to make
 * @typedef {{operation: WriteOperation, args: unknown[], resolve: (value: void) => void, reject: (error: unknown) => void}} PendingCall
 */

/** Failures that do not fix themselves: the console is told once each. */
const PERMANENT = new Set(['account_erased', 'invalid_server_url']);


/** A configured TipSync: the replica, its sync, and (in a browser) the tab that syncs. */
export class TipSync extends EventTarget {
  /** @param {TipSyncOptions} options */
  static async configure(options) {
    const name = options.name ?? options.device;
    const browser = typeof indexedDB !== 'undefined' && (options.storage ?? 'indexeddb') === 'indexeddb';
    const store = browser ? await IndexedDBStore.open(name) : new MemoryStore();
    const replica = await Replica.open({ store, device: options.device, catalog: options.catalog, overrides: options.overrides, context: options.context });
    // Every tab of a device that syncs holds back its tips until the first sync (protocol.md §17.1),
    // from before this call returns — whichever tab ends up syncing.
    if (syncs(options)) await replica.holdForFirstSync(options.firstSyncTimeout ?? 5);
    const tipsync = new TipSync(replica, options, name);
    tipsync.#start(browser);
    return tipsync;
  }

  /**
   * @private
   * @param {Replica} replica
   * @param {TipSyncOptions} options
   * @param {string} name
   */
  constructor(replica, options, name) {
    super();
    /** @type {Replica} */
    this.replica = replica;
    this.options = options;
    this.name = name;
    /** Whether this tab holds the device's lock: it writes the log and, with a server, syncs. */
    this.leads = false;
    /** @type {SyncClient | null} */
    this.client = null;
    /** @type {BroadcastChannel | null} */
    this.channel = null;
    /**
     * Writes sent to the syncing tab and not yet answered, by request id.
     * @type {Map<string, PendingCall>}
     */
    this.pending = new Map();
    /**
     * Tips whose reach is being written (protocol.md §13.12).
     * @type {Set<string>}
     */
    this.reaching = new Set();
    this.nextRequest = 1;
    /**
     * This tab's writes, one after another (a write made before it led runs first).
     * @type {Promise<unknown>}
     */
    this.queue = Promise.resolve();
    /**
     * The sync status (the syncing tab's, in every tab): `state` (`connecting`, `connected`,
     * `offline`, `refused` or `stopped`, protocol.md §17.4), `connected`, `hasSynced`, `heldForFirstSync`,
     * `pendingChanges`, `lastSyncedAt`, `lastError` (a message), `code` (the failure's protocol code),
     * `nextAttemptAt` (while offline or refused). Changes fire `syncstatus`.
     * @type {{state: string, connected: boolean, hasSynced: boolean, heldForFirstSync: boolean, pendingChanges: number, lastSyncedAt: number | null, lastError: string | null, code?: string | null, nextAttemptAt: number | null}}
     */
    this.syncStatus = {
      state: 'connecting', connected: false, hasSynced: replica.progress.hasSynced, heldForFirstSync: replica.isHeldForFirstSync,
      pendingChanges: 0, lastSyncedAt: null, lastError: null, nextAttemptAt: null,
    };
    /** Permanent failure codes already warned about on the console. */
    /** @type {Set<string>} */
    this.warned = new Set();
    replica.subscribe(() => this.dispatchEvent(new Event('change')));
    // The sync bookkeeping moved (an answer came in), here or in the syncing tab.
    replica.onProgress(() => this.dispatchEvent(new Event('progress')));
  }

  /** @param {boolean} browser */
  #start(browser) {
    const locks = globalThis.navigator?.locks;
    if (!browser || !locks || typeof BroadcastChannel === 'undefined') {
      this.#lead();
      return;
    }
    this.channel = new BroadcastChannel(`tipsync:${this.name}`);
    this.channel.onmessage = (event) => this.#receive(event.data);
    // Wait for the lock: whichever tab holds it syncs until it closes; then the next one takes over.
    locks.request(`tipsync:${this.name}`, async () => {
      await this.replica.reload();
      this.#lead();
      await new Promise(() => {}); // held for the tab's lifetime
    });
  }

  /**
   * Whether this tab syncs with a server now: it holds the lock, was given a server, and its sync has
   * not stopped. Never true while nothing syncs.
   */
  get isSyncing() {
    return this.leads && this.client !== null && this.syncStatus.state !== 'stopped';
  }

  /** This tab writes the log and syncs. */
  #lead() {
    this.leads = true;
    // Writes made before this tab knew it would sync (right after `configure()`, before the lock
    // was granted) were offered to a syncing tab that did not exist: this tab runs them now, in the
    // order they were made. The other tabs offer theirs again, to this tab.
    const waiting = [...this.pending.values()];
    this.pending.clear();
    this.#runInOrder(waiting);
    this.channel?.postMessage({ type: 'leader' });
    // The whole log only when the state changed; an answer that moved only the bookkeeping (every
    // pull does) sends just that.
    this.replica.subscribe(() => this.#announce());
    this.replica.onProgress(() => this.channel?.postMessage({ type: 'progress', progress: this.replica.progress }));
    if (syncs(this.options)) {
      this.client = new SyncClient(this.replica, {
        server: /** @type {string} */ (this.options.server), token: this.options.token, tokenProvider: this.options.tokenProvider,
        followsServerCatalog: this.options.followsServerCatalog, live: this.options.live,
        firstSyncTimeout: this.options.firstSyncTimeout,
      });
      this.client.onStatus((status, before) => {
        const shared = { ...status, lastError: status.lastError?.message ?? null, code: status.lastError?.code ?? null };
        this.channel?.postMessage({ type: 'status', status: shared, code: status.lastError?.code ?? null, failed: status.lastError !== before.lastError && status.lastError !== null });
        this.#status(shared, status.lastError !== before.lastError && status.lastError !== null ? status.lastError.code : null);
      });
      // After the page's code that awaited configure() has run, so it hears every event.
      const client = this.client;
      this.syncing = new Promise((resolve) => setTimeout(resolve, 0))
        .then(() => (this.stopped ? undefined : client.run()))
        .catch(() => {});
    }
    this.dispatchEvent(new Event('leader'));
  }

  /** Tells the other tabs what this one holds now. */
  #announce() {
    if (!this.channel) return;
    this.channel.postMessage({
      type: 'state',
      changes: [...this.replica.log.values()].map(encodeChange),
      progress: this.replica.progress,
      serverCatalog: this.replica.serverCatalog,
    });
  }

  /**
   * A new sync status (from this tab's client or the syncing tab's): `syncstatus` always; `syncerror`
   * for a failure (`failedCode` its code), `syncrecovered` when an exchange succeeds after one; a
   * console warning, once per kind, for a failure that will not fix itself.
   * @param {TipSync['syncStatus']} status
   * @param {string | null} failedCode
   */
  #status(status, failedCode) {
    const before = this.syncStatus;
    this.syncStatus = status;
    this.dispatchEvent(Object.assign(new Event('syncstatus'), { detail: status }));
    if (failedCode !== null) {
      this.dispatchEvent(Object.assign(new Event('syncerror'), { error: status.lastError, code: failedCode }));
      const warning = PERMANENT.has(failedCode) ? failedCode : null;
      if (warning && !this.warned.has(warning)) {
        this.warned.add(warning);
        console.warn(`TipSync cannot sync and will not until this is fixed: ${status.lastError}`);
      } else if (!warning && status.state === 'refused' && !this.warned.has(`refused:${failedCode}`)) {
        this.warned.add(`refused:${failedCode}`);
        console.warn(`TipSync: ${this.options.server} refused to sync (${failedCode}): ${status.lastError}. Retrying with backoff.`);
      } else if (!warning && status.state !== 'refused' && !this.warned.has('unreachable')) {
        this.warned.add('unreachable');
        console.warn(
          `TipSync cannot reach ${this.options.server}: ${status.lastError} ` +
            '(the server is down, the device offline, or the server does not allow this origin: its --cors-origins). Retrying.');
      }
    } else if (before.lastError !== null && status.lastError === null) {
      this.dispatchEvent(new Event('syncrecovered'));
    }
  }

  /**
   * Resolves true once this device has completed its first sync (in this tab or the one that syncs),
   * false when `timeout` milliseconds pass first.
   * @param {number} [timeout]
   * @returns {Promise<boolean>}
   */
  waitForFirstSync(timeout = 10_000) {
    return this.replica.waitForFirstSync(timeout);
  }

  /** @param {any} message a message from another tab of this device (`#post`) */
  async #receive(message) {
    if (message.type === 'status' && !this.leads) {
      this.#status(message.status, message.failed ? message.code : null);
    } else if (message.type === 'state' && !this.leads) {
      this.replica.adopt(message.changes.map(decodeChange), message.progress, message.serverCatalog);
    } else if (message.type === 'progress' && !this.leads) {
      this.replica.adoptProgress(message.progress);
    } else if (message.type === 'call' && this.leads) {
      let reply;
      try {
        await this.#call(message.operation, message.args);
        reply = { type: 'reply', id: message.id, ok: true };
      } catch (error) {
        reply = { type: 'reply', id: message.id, ok: false, error: messageOf(error) };
      }
      this.#post(reply);
      this.#announce();
    } else if (message.type === 'leader' && !this.leads) {
      // A new syncing tab: what no tab has answered yet goes to it (the one it went to may have closed).
      for (const [id, call] of this.pending) this.#post({ type: 'call', id, operation: call.operation, args: call.args });
    } else if (message.type === 'reply' && this.pending.has(message.id)) {
      const { resolve, reject } = /** @type {PendingCall} */ (this.pending.get(message.id));
      this.pending.delete(message.id);
      if (message.ok) resolve(undefined);
      else reject(new Error(message.error));
    }
  }

  /**
   * Makes a write on this tab's replica.
   * @param {WriteOperation} operation
   * @param {unknown[]} args
   * @returns {Promise<unknown>}
   */
  async #call(operation, args) {
    const method = /** @type {(...args: unknown[]) => unknown} */ (this.replica[operation]);
    return method.apply(this.replica, args);
  }

  /**
   * Runs a write here when this tab syncs, else in the tab that does.
   * @param {WriteOperation} operation
   * @param {unknown[]} args
   * @returns {Promise<void>}
   */
  #write(operation, args) {
    if (this.leads || !this.channel) {
      // After any write made before this tab led, which runs first.
      const run = this.queue.catch(() => {}).then(() => this.#call(operation, args));
      this.queue = run;
      return run.then(() => undefined);
    }
    const id = `${Date.now()}-${this.nextRequest++}-${Math.random()}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { operation, args, resolve, reject });
      this.#post({ type: 'call', id, operation, args });
    });
  }

  /**
   * Tells the other tabs of this device (a tab without a channel has none to tell).
   * @param {any} message
   */
  #post(message) {
    this.channel?.postMessage(message);
  }

  /**
   * Runs writes on this tab's replica one after another, settling each caller's promise.
   * @param {PendingCall[]} calls
   */
  #runInOrder(calls) {
    for (const call of calls) {
      const run = this.queue.catch(() => {}).then(() => this.#call(call.operation, call.args));
      this.queue = run;
      run.then(() => call.resolve(undefined), (error) => call.reject(error));
    }
  }

  /**
   * Donates to an event now, with an optional JSON payload.
   * @param {string} event
   * @param {JSONValue} [info]
   * @returns {Promise<void>}
   */
  donate(event, info) {
    return this.#write('donate', info === undefined ? [event] : [event, info]);
  }

  /**
   * Sets a parameter rules read.
   * @param {string} id
   * @param {JSONValue} value
   * @returns {Promise<void>}
   */
  setParameter(id, value) {
    return this.#write('setParameter', [id, value]);
  }

  /**
   * Invalidates a tip on every device: `tipClosed` (default), `actionPerformed`, …
   * @param {string} tip
   * @param {string} [reason]
   * @returns {Promise<void>}
   */
  invalidate(tip, reason = 'tipClosed') {
    return this.#write('invalidate', [tip, reason]);
  }

  /**
   * Makes an invalidated tip eligible again (a new display epoch).
   * @param {string} tip
   * @returns {Promise<void>}
   */
  resetEligibility(tip) {
    return this.#write('resetEligibility', [tip]);
  }

  /**
   * Records that a tip was shown once, for `duration` seconds.
   * @param {string} tip
   * @param {number} [duration]
   * @returns {Promise<void>}
   */
  recordDisplay(tip, duration = 0) {
    return this.#write('recordDisplay', [tip, duration]);
  }

  /**
   * Deletes every donation of an event, everywhere.
   * @param {string} event
   * @returns {Promise<void>}
   */
  deleteDonations(event) {
    return this.#write('deleteDonations', [event]);
  }

  /** Removes every tip, event and parameter record, everywhere. */
  resetDatastore() {
    return this.#write('resetDatastore', []);
  }

  /**
   * A tip's status now: what the page shows it by, so asking records the reach of the tip's running
   * experiment when it would be shown now (protocol.md §13.12) — in the holdout, where it reads
   * `pending`, as in the treatment. `explain()` only reads.
   * @returns {TipStatus}
   * @param {string} tip
   */
  status(tip) {
    this.#noteReach(tip);
    return this.replica.status(tip);
  }

  /**
   * Records the tip's reach once if due (one write in flight per tip).
   * @param {string} tip
   */
  #noteReach(tip) {
    if (this.reaching.has(tip) || this.replica.reachDue(tip) === null) return;
    this.reaching.add(tip);
    this.#write('recordReach', [tip])
      .catch(() => {})
      .finally(() => this.reaching.delete(tip));
  }

  /**
   * Why a tip has its status now (protocol.md §13.9): `{tip, status, reason, …}` — e.g. `{reason:
   * 'rule', index: 0, expression, values: {'param:isLoggedIn': false}}`. `null` for an unknown tip.
   * @param {string} tip
   */
  explain(tip) {
    return this.replica.explain(tip);
  }

  /**
   * Changes what targeting reads about this device (`platform`, `appVersion`, `locale`; protocol.md §13.8).
   * @param {import("./context.js").DeviceContext} context
   */
  setContext(context) {
    this.replica.setContext(context);
  }

  /**
   * A tip's definition (title, message, image, actions) from the catalog in force.
   * @param {string} id
   */
  tip(id) {
    return this.replica.tip(id);
  }

  /**
   * A tip's definition with its title, message, image and action titles in `locale` (default: the
   * device's; protocol.md §13.10, fallback `fr-CA` → `fr` → the tip's own). `undefined` for an unknown tip.
   * @param {string} id
   * @param {string | null} [locale]
   */
  content(id, locale = this.replica.deviceContext?.locale) {
    const tip = this.replica.tip(id);
    return tip ? localized(contentFor(tip, this.replica.deviceContext?.account), locale) : undefined;
  }

  /**
   * A group's current tip, or null: what the page shows the group by (it records reach, as `status()`).
   * @param {string} group
   */
  currentTip(group) {
    // Showing the group reaches the tip it shows, or would show but for a holdout (protocol.md §13.12).
    const reached = this.replica.groupReachDue(group);
    if (reached !== null) this.#noteReach(reached);
    return this.replica.currentTip(group);
  }

  /**
   * Calls `listener` with a tip's status now and whenever it changes.
   * @returns {() => void} stop
   * @param {string} tip
   * @param {(status: TipStatus) => void} listener
   */
  watch(tip, listener) {
    this.#noteReach(tip);
    const stopReach = this.replica.subscribe(() => this.#noteReach(tip));
    const stop = this.replica.watch(tip, listener, () => this.#noteReach(tip));
    return () => {
      stopReach();
      stop();
    };
  }

  /**
   * A tip's statuses as they change, as an async iterator.
   * @param {string} tip
   */
  statusUpdates(tip) {
    return this.replica.statusUpdates(tip);
  }

  /**
   * Sets testing overrides (local only, never synced): `{showAll, hideAll, shown: [ids], hidden: [ids]}`.
   * @param {TestingOverrides} overrides
   */
  setTestingOverrides(overrides) {
    this.replica.setOverrides(overrides);
  }

  /** Stops syncing (this tab). */
  stop() {
    this.stopped = true;
    this.client?.stop();
    this.channel?.close();
  }
}

/**
 * Whether the options turn sync on: a server and a credential.
 * @param {TipSyncOptions} options
 * @returns {boolean}
 */
function syncs(options) {
  return Boolean(options.server && (options.token || options.tokenProvider));
}

/** The instance `<tipsync-tip>` elements use unless given another (`element.tipsync = …`). */
/** @type {TipSync | null} */
export let defaultTipSync = null;

/**
 * Configures TipSync for the page; elements on it use this instance.
 * @param {TipSyncOptions} options
 */
export async function configure(options) {
  defaultTipSync = await TipSync.configure(options);
  globalThis.dispatchEvent?.(new CustomEvent('tipsync-configured', { detail: defaultTipSync }));
  return defaultTipSync;
}

