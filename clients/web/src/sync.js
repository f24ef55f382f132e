// Sync as protocol.md defines it: idempotent pushes with retries (409 resumes, 422 clock_skew
// re-stamps, 429 waits Retry-After, 401 token_expired asks for a new token), pulls with cursors,
// live updates over a fetch-read event stream (the bearer token is a header, never in a URL), gzip
// both ways where CompressionStream exists, and the catalog from the server.
//
// This file is the client's state and its loop (`run`: a round, then the live stream beside a push
// after every local change, backoff after failures); the parts are beside it, as the Swift client's
// are: `sync-push.js`, `sync-pull.js` (pages and live streams), `sync-catalog.js`,
// `sync-requests.js` (token, headers, Retry-After, clock correction), `sync-error.js`.
//
// Liveness: no local change waits for another to be pushed. The push loop subscribes to local
// changes before it reads the outbox, so a change stored at any moment — during a round, a pull, a
// live stream, a backoff, a re-stamp — is either in the outbox it reads or wakes it after.

import { delayAfterFailures, delayAfterStreamEnded } from './backoff.js';
import { asSyncError, parseBody, rejectionOf, SyncError } from './sync-error.js';
import { followLiveStream, pullAll } from './sync-pull.js';
import { pushAll } from './sync-push.js';
import { compressionStream, timed } from './sync-requests.js';

export { EventStreamReader } from './event-stream.js';
export { SyncError, refusedIndex } from './sync-error.js';
export { MAX_PUSH_BODY_BYTES, pushBody } from './sync-push.js';

/** @typedef {import('./replica.js').Replica} Replica */

/**
 * @typedef {{
 *   server: string | URL,
 *   token?: string,
 *   tokenProvider?: () => Promise<string>,
 *   fetch?: typeof globalThis.fetch,
 *   sleep?: (milliseconds: number) => Promise<void>,
 *   random?: () => number,
 *   pushBatchSize?: number,
 *   pullLimit?: number,
 *   longPollSeconds?: number,
 *   live?: boolean,
 *   liveStreamSilence?: number,
 *   followsServerCatalog?: boolean,
 *   compressPushes?: boolean,
 *   initialBackoff?: number,
 *   maximumBackoff?: number,
 *   firstSyncTimeout?: number,
 *   onRefusedChange?: (refused: {change: import('./change.js').Change, reason: string}) => void,
 * }} SyncOptions
 * `live`: receive changes on `/v1/live` streams that carry them (else long-polls);
 * `liveStreamSilence`: seconds a live stream may stay silent before it is taken for lost (60); `followsServerCatalog`: apply the
 * catalog operators upload; `initialBackoff` (1000) and `maximumBackoff` (60000): the base and maximum of
 * the retry delays, in milliseconds (protocol.md §17.3, `backoff.js`); `sleep` and `random` (a draw
 * in 0…1 that picks each delay within its range) are injected by tests;
 * `firstSyncTimeout`: seconds a device that never completed a sync holds back tips that would be
 * available (5; 0: no hold; protocol.md §17.1).
 *
 * @typedef {'connecting' | 'connected' | 'offline' | 'refused' | 'stopped'} SyncState
 * Where the exchange with the server stands (protocol.md §17.4): `connecting` before the first
 * answer; `connected`; `offline` (no answer); `refused` (the server refused: `lastError.code`,
 * `nextAttemptAt`); `stopped` (the app stopped it, or the account was erased).
 *
 * @typedef {{
 *   state: SyncState, connected: boolean, hasSynced: boolean, heldForFirstSync: boolean, pendingChanges: number,
 *   lastSyncedAt: number | null, lastError: SyncError | null, nextAttemptAt: number | null,
 * }} SyncStatus
 * `state`: see {@link SyncState}; `nextAttemptAt`: while offline or refused, when the client tries
 * again (ms since 1970);
 * `connected`: `state` is `connected`; `hasSynced`: a pull reached the end of
 * the account's log at least once; `heldForFirstSync`: tips are held back for it; `pendingChanges`:
 * local changes not yet acknowledged; `lastSyncedAt`: when a page was last merged (ms since 1970);
 * `lastError`: why the latest attempt failed, until one succeeds.
 *
 * @typedef {{
 *   fail: (error: SyncError) => void,
 *   noteLive: (half: 'pushed' | 'receiving') => void,
 *   firstContact: () => Promise<void>,
 * }} SyncParts
 * What the sync client's parts may do to its private state: record a failure, note one half of
 * being live (for `run`'s backoff), check the device's log on the server before the first exchange.
 */

/** Keeps a replica in sync with a TipSync server. */
export class SyncClient {
  /**
   * @param {Replica} replica
   * @param {SyncOptions} options
   */
  constructor(replica, options) {
    this.replica = replica;
    this.server = new URL(options.server);
    this.token = options.token ?? null;
    this.tokenProvider = options.tokenProvider ?? null;
    /** @type {typeof globalThis.fetch} */
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.sleep = options.sleep ?? ((milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds)));
    this.random = options.random ?? Math.random;
    this.pushBatchSize = options.pushBatchSize ?? 500;
    this.pullLimit = options.pullLimit ?? 5000;
    this.longPollSeconds = options.longPollSeconds ?? 25;
    this.live = options.live ?? true;
    this.liveStreamSilence = options.liveStreamSilence ?? 60;
    this.followsServerCatalog = options.followsServerCatalog ?? false;
    this.compressPushes = (options.compressPushes ?? true) && typeof compressionStream === 'function';
    this.initialBackoff = options.initialBackoff ?? 1000;
    this.maximumBackoff = options.maximumBackoff ?? 60_000;
    /**
     * The latest failure, if the latest round failed.
     * @type {SyncError | null}
     */
    this.lastError = null;
    /**
     * A server catalog version refused as invalid (not fetched again).
     * @type {string | null}
     */
    this.refusedCatalogTag = null;
    /** @type {AbortController | null} */
    this.controller = null;
    /** @type {Set<(status: SyncStatus, before: SyncStatus) => void>} */
    this.statusListeners = new Set();
    /**
     * Changes the server refused and this client set aside (protocol.md §17.2), oldest first.
     * @type {{change: import('./change.js').Change, reason: string}[]}
     */
    this.setAside = [];
    /**
     * Told of each change set aside.
     * @type {((refused: {change: import('./change.js').Change, reason: string}) => void) | null}
     */
    this.onRefusedChange = options.onRefusedChange ?? null;
    // A device that has never synced holds its tips back from now on (protocol.md §17.1).
    this.firstSyncTimeout = options.firstSyncTimeout ?? 5;
    replica.holdForFirstSync(this.firstSyncTimeout).catch(() => {});
    /**
     * The status now; {@link onStatus} is told of every change.
     * @type {SyncStatus}
     */
    this.status = {
      state: /** @type {SyncState} */ ('connecting'), connected: false, hasSynced: replica.progress.hasSynced, heldForFirstSync: replica.isHeldForFirstSync,
      pendingChanges: 0, lastSyncedAt: null, lastError: null, nextAttemptAt: null,
    };
    /**
     * Changes a push may hold after a `413` (halved each time); null: `pushBatchSize`.
     * @type {number | null}
     */
    this.pushLimit = null;
    // The bookkeeping moved (an answer settled, a tab adopted): the status follows at once.
    replica.onProgress(() => this.publishStatus());
  }

  /**
   * Calls `listener(status, before)` on every change of {@link status}.
   * @returns {() => void} stop
   * @param {(status: SyncStatus, before: SyncStatus) => void} listener
   */
  onStatus(listener) {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /**
   * Recomputes the status and tells listeners when it changed. `connected`: an exchange succeeded —
   * the state becomes `connected` only once no failure is outstanding (a round clears it), so a round
   * whose pull works but whose push is refused never flashes `connected`; `state`: a failure's state.
   * `nextAttemptAt`: when a retry is due (`null`: none; left out: unchanged).
   * @param {{connected?: boolean, state?: SyncState, error?: SyncError | null, synced?: boolean, nextAttemptAt?: number | null}} [what]
   */
  publishStatus(what = {}) {
    const { connected, state, error, synced = false, nextAttemptAt } = what;
    const before = this.status;
    const next = { ...before };
    if (error !== undefined) next.lastError = error;
    if (connected === true && next.lastError === null) {
      next.state = 'connected';
      next.nextAttemptAt = null;
    }
    if (state !== undefined) {
      next.state = state;
      if (state !== 'offline' && state !== 'refused') next.nextAttemptAt = null;
    }
    if (nextAttemptAt !== undefined) next.nextAttemptAt = nextAttemptAt;
    next.connected = next.state === 'connected';
    if (synced) next.lastSyncedAt = this.replica.physicalNow();
    next.hasSynced = this.replica.progress.hasSynced;
    next.heldForFirstSync = this.replica.isHeldForFirstSync;
    next.pendingChanges = Math.max(0, this.replica.lastLocalSeq - this.replica.progress.pushedSeq);
    const same = /** @type {(keyof SyncStatus)[]} */ (Object.keys(next)).every((key) => next[key] === before[key]);
    if (same) return;
    this.status = next;
    for (const listener of [...this.statusListeners]) listener(next, before);
  }

  /**
   * Records a failed exchange: one status, with when the next attempt is (`null`: none is planned —
   * a round the app asked for).
   * @param {SyncError} error
   * @param {number | null} [nextAttemptAt]
   */
  #fail(error, nextAttemptAt = null) {
    this.lastError = error;
    this.publishStatus({ state: error.endsSync ? 'stopped' : error.isRefusal ? 'refused' : 'offline', error, nextAttemptAt });
  }

  /**
   * Resolves true once this device has completed its first sync (now or before), false when
   * `timeout` milliseconds pass first. Only waits: the sync is {@link run}'s.
   * @param {number} timeout
   * @returns {Promise<boolean>}
   */
  waitForFirstSync(timeout) {
    return this.replica.waitForFirstSync(timeout);
  }

  /**
   * One round: push everything unsent, then pull until the server has nothing more. A push the
   * server refuses does not keep the pull from happening (changes made elsewhere arrive whatever
   * this device's outbox holds); its refusal is thrown after the pull.
   */
  async syncOnce() {
    try {
      await this.#round();
    } catch (error) {
      this.#fail(asSyncError(error));
      throw this.lastError;
    }
  }

  /** {@link syncOnce} but for its failure's status: {@link run} publishes that once, with its next attempt. */
  async #round() {
    if (this.server.protocol !== 'http:' && this.server.protocol !== 'https:') {
      throw new SyncError(`the server address ${this.server.href} is not an http: or https: URL`, { code: 'invalid_server_url' });
    }
    await this.#firstContact();
    await this.#learnAccount();
    let refusedPush = null;
    try {
      await this.pushAll();
    } catch (error) {
      const failure = asSyncError(error);
      if (!failure.isRefusal || failure.endsSync) throw failure;
      refusedPush = failure;
    }
    await this.pullAll(0);
    if (refusedPush) throw refusedPush;
    this.lastError = null;
    this.publishStatus({ connected: true, error: null, synced: true });
  }

  /**
   * Pushes everything unsent, batch by batch (protocol.md §7; `sync-push.js`).
   * @param {AbortSignal} [signal]
   */
  pushAll(signal) {
    return pushAll(this, this.#parts, signal);
  }

  /**
   * Pulls page after page until the server has nothing more (protocol.md §8; `sync-pull.js`).
   * @param {number} [wait] seconds the first pull may wait for news (a long-poll)
   * @param {AbortSignal} [signal]
   */
  pullAll(wait = 0, signal) {
    return pullAll(this, this.#parts, wait, signal);
  }

  /** Returns once every local change made before the call is on the server. */
  async pushPending() {
    const target = this.replica.lastLocalSeq;
    while (this.replica.progress.pushedSeq < target) await this.pushAll();
  }

  /**
   * Syncs until {@link stop}: a full round, then live updates (or long-polls) alongside a push after
   * every local change. Every failure — no answer, a `5xx`, a `429`, a refused credential (`401`,
   * `403`: `tokenProvider` is asked again first), an answer that does not parse — is retried after a
   * delay drawn from a range that doubles with each failure in a row up to `maximumBackoff`
   * (protocol.md §17.3), for as long as the client runs. Only an answer that can never change
   * (`account_erased`) ends it: `status.state` is then `stopped` and the promise rejects.
   */
  async run() {
    this.controller = new AbortController();
    const { signal } = this.controller;
    try {
      await this.#runUntil(signal);
    } finally {
      this.publishStatus({ state: 'stopped' });
    }
  }

  /** @param {AbortSignal} signal */
  async #runUntil(signal) {
    // The failures in a row the backoff reads (protocol.md §17.3), and whether this attempt is live:
    // they start again from 0 only once the outbox is pushed *and* other devices' changes reach the
    // device (a stream delivered `event: ready`, or, without streams, a round completed).
    const inARow = { failures: 0, waited: 0, pushed: false, receiving: false };
    this.#live = (half) => {
      const wasLive = inARow.pushed && inARow.receiving;
      inARow[half] = true;
      if (wasLive || !(inARow.pushed && inARow.receiving)) return;
      inARow.failures = 0;
      inARow.waited = 0; // milliseconds waited since the first failure in a row
      // What a completed round says, when the client went straight to its stream.
      this.lastError = null;
      this.publishStatus({ connected: true, error: null });
    };
    while (!signal.aborted) {
      try {
        inARow.pushed = this.replica.outbox(1).length === 0;
        inARow.receiving = false;
        this.#completedRound = false;
        // A device that was live (streams on, synced, holding a cursor, its account known or asked)
        // reopens its stream at its cursor, whose first pages catch it up, while the push loop sends
        // only what the outbox holds: one request per device when a restarted server comes back.
        if (!this.#resumesLive()) {
          await this.#round();
          this.#completedRound = true;
          this.#live('pushed');
          if (!this.live) this.#live('receiving');
        }
        // Stopped during the round: an abort that already happened fires no event.
        if (signal.aborted) return;
        const round = new AbortController();
        const stopRound = () => round.abort();
        signal.addEventListener('abort', stopRound);
        try {
          await Promise.race([this.#pullLive(round.signal), this.#pushOnLocalChanges(round.signal)]);
        } finally {
          round.abort();
          signal.removeEventListener('abort', stopRound);
        }
      } catch (error) {
        if (signal.aborted) return;
        const failure = asSyncError(error);
        if (failure.endsSync) {
          this.#fail(failure);
          throw failure;
        }
        // A refused credential may be fixed where it comes from (a reissued token, a server back on
        // the right database): ask the provider again before the next attempt.
        if ((failure.status === 401 || failure.status === 403) && this.tokenProvider) this.token = null;
        const delay = delayAfterFailures(inARow.failures, this.random(), this.#backoff, inARow.waited);
        // One status per failure, saying when the next attempt is.
        this.#fail(failure, this.replica.physicalNow() + delay);
        await this.sleep(delay);
        if (signal.aborted) return;
        inARow.waited += delay;
        inARow.failures += 1;
      }
    }
  }

  /** Notes one half of being live (`'pushed'` or `'receiving'`) for {@link run}'s backoff. */
  #live = (/** @type {'pushed' | 'receiving'} */ _half) => {};
  /** Whether this attempt of {@link run} began with a completed round. */
  #completedRound = false;

  /** Whether {@link run} goes straight to the live stream, without a push and a pull first. */
  #resumesLive() {
    const progress = this.replica.progress;
    if (!this.live || !progress.hasSynced || !progress.pullCursor) return false;
    return typeof this.replica.deviceContext?.account === 'string' || this.#accountAsked;
  }

  /**
   * What the parts (`sync-push.js`, `sync-pull.js`) may do that an app may not: the client's own
   * bookkeeping, kept private here and handed to them.
   * @type {SyncParts}
   */
  #parts = {
    fail: (error) => this.#fail(error),
    noteLive: (half) => this.#live(half),
    firstContact: () => this.#firstContact(),
  };

  /** Ends {@link run} (and any request it has open). */
  stop() {
    this.controller?.abort();
  }

  /**
   * Pushes the outbox, then again after every local change: level-triggered.
   * @param {AbortSignal} signal
   */
  async #pushOnLocalChanges(signal) {
    while (!signal.aborted) {
      /** @type {() => void} */
      let wake = () => {};
      const woken = new Promise((resolve) => (wake = () => resolve(undefined)));
      const unsubscribe = this.replica.onLocalChange(() => wake());
      const aborted = () => wake();
      signal.addEventListener('abort', aborted);
      try {
        await this.pushAll(signal);
        this.#live('pushed');
        await woken;
        this.publishStatus();
      } finally {
        unsubscribe();
        signal.removeEventListener('abort', aborted);
      }
    }
  }

  /**
   * Receives other devices' changes until `signal` aborts: on live streams that carry them
   * (`GET /v1/live?cursor=…`, protocol.md §9), one after the other, or by long-polls.
   * @param {AbortSignal} signal
   */
  async #pullLive(signal) {
    if (!this.live) {
      while (!signal.aborted) {
        await this.pullAll(this.longPollSeconds, signal);
        this.#live('receiving');
      }
      return;
    }
    while (!signal.aborted) {
      if ((await followLiveStream(this, this.#parts, signal)) === 'endedByServer' && !signal.aborted) {
        // So that an instance's devices do not all return in the same instant (protocol.md §17.3).
        await this.sleep(delayAfterStreamEnded(this.random(), this.#backoff));
      }
    }
  }

  /** The retry delays' base and maximum, in milliseconds. */
  get #backoff() {
    return { base: this.initialBackoff, maximum: this.maximumBackoff };
  }




  /**
   * Before a replica's first push: if the server already holds a log of this device (the browser's
   * storage was cleared, the app reinstalled), this replica's changes would reuse its sequence
   * numbers and be taken for duplicates — lost. They are numbered after the server's highest
   * (`GET /v1/devices/{name}`, protocol.md §7) instead, and the old log comes back with the pulls.
   * Before the first push **or pull**: a pull's `highestSeq` would otherwise count them acknowledged.
   */
  async #firstContact() {
    const progress = this.replica.progress;
    if (this.#contacted || progress.serverGeneration !== null || progress.acknowledgedHighSeq > 0 || progress.pullCursor !== null) return;
    const { response } = await timed(this, 'GET', `/v1/devices/${encodeURIComponent(this.replica.deviceID)}`, {});
    const text = await response.text();
    if (response.status === 404) {
      this.#contacted = true; // the server has not seen this device
      return;
    }
    if (response.status !== 200) throw rejectionOf(response.status, text);
    const held = parseBody(text).highestSeq;
    if (Number.isInteger(held) && held > 0) await this.replica.renumberAfter(held);
    this.#contacted = true;
  }

  /** Whether the device check of `#firstContact` was answered (in memory: a relaunch checks again). */
  #contacted = false;

  /**
   * Asks the server whom the credential names, once, while the replica does not know its account:
   * rollout buckets hash the account's name (protocol.md §13.8). A server without the route (`404`,
   * older than revision 2.4) leaves it unknown, and bucketed tips stay pending.
   */
  async #learnAccount() {
    if (this.#accountAsked || typeof this.replica.deviceContext?.account === 'string') return;
    const { response } = await timed(this, 'GET', '/v1/account', {});
    const text = await response.text();
    if (response.status === 200) {
      const { account } = parseBody(text);
      if (typeof account === 'string') await this.replica.setAccount(account);
    } else if (response.status !== 404) {
      throw rejectionOf(response.status, text);
    }
    this.#accountAsked = true;
  }

  /** Whether `#learnAccount` was answered. */
  #accountAsked = false;








}

