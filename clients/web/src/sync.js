// Sync as protocol.md defines it: idempotent pushes with retries (409 resumes, 422 clock_skew
// re-stamps, 429 waits Retry-After, 401 token_expired asks for a new token), pulls with cursors,
// live updates over a fetch-read event stream (the bearer token is a header, never in a URL), gzip
// both ways where CompressionStream exists, and the catalog from the server.
//
// Liveness: no local change waits for another to be pushed. The push loop subscribes to local
// changes before it reads the outbox, so a change stored at any moment — during a round, a pull, a
// live stream, a backoff, a re-stamp — is either in the outbox it reads or wakes it after.

import { delayAfterFailures, delayAfterStreamEnded, retryAfterSeconds } from './backoff.js';
import { decodeChange, encodeChange, violation } from './change.js';
import { contextHeader } from './context.js';
import { canonicalText, parse } from './json.js';
import { keptThroughUncertainPush, noteServer, recordUncertainPush, setPushed } from './progress.js';

/** @typedef {import('./replica.js').Replica} Replica */

/**
 * The answers that can never change, and so end {@link SyncClient.run} (protocol.md §17.3): the
 * account was erased (syncing on would upload what its owner erased), or the server address is not
 * one a request can be sent to. Every other failure is retried with backoff, forever.
 */
const ENDS_SYNC = new Set(['account_erased', 'invalid_server_url']);

/** The most bytes of body a client puts in one push (protocol.md §7). */
export const MAX_PUSH_BODY_BYTES = 1_048_576;

/**
 * A failure of sync. {@link SyncClient.run} retries every one with backoff except those that
 * `endsSync` (an erased account); `transient` is their opposite, kept for callers that read it.
 */
export class SyncError extends Error {
  /**
   * @param {string} message
   * @param {{status?: number, code?: string, transient?: boolean}} details
   */
  constructor(message, { status = 0, code = 'unreachable', transient = false } = {}) {
    super(message);
    this.name = 'SyncError';
    this.status = status;
    this.code = code;
    /** The answer can never change: {@link SyncClient.run} ends. */
    this.endsSync = ENDS_SYNC.has(code);
    this.transient = transient || !this.endsSync;
  }

  /** The server answered with a refusal (as opposed to no answer at all). */
  get isRefusal() {
    return this.status > 0;
  }
}

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
 */

/** Keeps a replica in sync with a TipSync server. */
export class SyncClient {
  /** @param {Replica} replica @param {SyncOptions} options */
  constructor(replica, options) {
    this.replica = replica;
    this.server = new URL(options.server);
    this.token = options.token ?? null;
    this.tokenProvider = options.tokenProvider ?? null;
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.sleep = options.sleep ?? ((milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds)));
    this.random = options.random ?? Math.random;
    this.pushBatchSize = options.pushBatchSize ?? 500;
    this.pullLimit = options.pullLimit ?? 5000;
    this.longPollSeconds = options.longPollSeconds ?? 25;
    this.live = options.live ?? true;
    this.liveStreamSilence = options.liveStreamSilence ?? 60;
    this.followsServerCatalog = options.followsServerCatalog ?? false;
    this.compressPushes = (options.compressPushes ?? true) && typeof globalThis.CompressionStream === 'function';
    this.initialBackoff = options.initialBackoff ?? 1000;
    this.maximumBackoff = options.maximumBackoff ?? 60_000;
    /** The latest failure, if the latest round failed. @type {SyncError | null} */
    this.lastError = null;
    /** A server catalog version refused as invalid (not fetched again). @type {string | null} */
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
    /** Told of each change set aside. @type {((refused: {change: import('./change.js').Change, reason: string}) => void) | null} */
    this.onRefusedChange = options.onRefusedChange ?? null;
    // A device that has never synced holds its tips back from now on (protocol.md §17.1).
    this.firstSyncTimeout = options.firstSyncTimeout ?? 5;
    replica.holdForFirstSync(this.firstSyncTimeout).catch(() => {});
    /** The status now; {@link onStatus} is told of every change. @type {SyncStatus} */
    this.status = {
      state: /** @type {SyncState} */ ('connecting'), connected: false, hasSynced: replica.progress.hasSynced, heldForFirstSync: replica.isHeldForFirstSync,
      pendingChanges: 0, lastSyncedAt: null, lastError: null, nextAttemptAt: null,
    };
    /** Changes a push may hold after a `413` (halved each time); null: `pushBatchSize`. @type {number | null} */
    this.pushLimit = null;
    // The bookkeeping moved (an answer settled, a tab adopted): the status follows at once.
    replica.onProgress(() => this.publishStatus());
  }

  /** Calls `listener(status, before)` on every change of {@link status}. @returns {() => void} stop */
  onStatus(listener) {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /**
   * Recomputes the status and tells listeners when it changed. `connected`: an exchange succeeded —
   * the state becomes `connected` only once no failure is outstanding (a round clears it), so a round
   * whose pull works but whose push is refused never flashes `connected`; `state`: a failure's state.
   * @param {{connected?: boolean, state?: SyncState, error?: SyncError | null, synced?: boolean, nextAttemptAt?: number}} [what]
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
    const same = Object.keys(next).every((key) => next[key] === before[key]);
    if (same) return;
    this.status = next;
    for (const listener of [...this.statusListeners]) listener(next, before);
  }

  /** Records a failed exchange. @param {SyncError} error */
  #fail(error) {
    this.lastError = error;
    this.publishStatus({ state: error.endsSync ? 'stopped' : error.isRefusal ? 'refused' : 'offline', error });
  }

  /**
   * Resolves true once this device has completed its first sync (now or before), false when
   * `timeout` milliseconds pass first. Only waits: the sync is {@link run}'s.
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
    } catch (error) {
      this.#fail(asSyncError(error));
      throw this.lastError;
    }
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
          await this.syncOnce();
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
        this.#fail(failure);
        if (failure.endsSync) throw failure;
        // A refused credential may be fixed where it comes from (a reissued token, a server back on
        // the right database): ask the provider again before the next attempt.
        if ((failure.status === 401 || failure.status === 403) && this.tokenProvider) this.token = null;
        const delay = delayAfterFailures(inARow.failures, this.random(), this.#backoff, inARow.waited);
        this.publishStatus({ nextAttemptAt: this.replica.physicalNow() + delay });
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

  /** Ends {@link run} (and any request it has open). */
  stop() {
    this.controller?.abort();
  }

  /** Pushes the outbox, then again after every local change: level-triggered. */
  async #pushOnLocalChanges(signal) {
    while (!signal.aborted) {
      let wake;
      const woken = new Promise((resolve) => (wake = resolve));
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
      if ((await this.#followLiveStream(signal)) === 'endedByServer' && !signal.aborted) {
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
   * Follows one live stream until it ends: merges each page that continues the cursor the replica
   * holds (its `from`), with the cursor after it, in one transaction. A page that does not continue
   * it ends the stream; the next opens at the replica's cursor and the server catches it up. A
   * stream silent for `liveStreamSilence` seconds (heartbeats come every 15 s) is taken for lost.
   * Resolves `'endedByServer'` when the server ended a stream that had begun, else `'reopenNow'`.
   * @returns {Promise<'endedByServer' | 'reopenNow'>}
   */
  async #followLiveStream(signal) {
    const cursor = this.replica.progress.pullCursor;
    if (!cursor) {
      await this.pullAll(0, signal); // a stream starts at a cursor: the round that mints one
      return 'reopenNow';
    }
    const stream = new AbortController();
    const abort = () => stream.abort();
    signal.addEventListener('abort', abort);
    let silence = null;
    let silent = false;
    const watch = () => {
      clearTimeout(silence);
      silence = setTimeout(() => {
        silent = true;
        stream.abort();
      }, this.liveStreamSilence * 1000);
    };
    try {
      watch();
      const path = `/v1/live?limit=${this.pullLimit}&cursor=${encodeURIComponent(cursor)}`;
      let response;
      try {
        response = await this.#send('GET', path, { signal: stream.signal, headers: { Accept: 'text/event-stream' }, stream: true });
      } catch (error) {
        if (silent) throw new SyncError('the live stream did not answer', { transient: true });
        throw error;
      }
      if (response.status !== 200) {
        const text = await response.text();
        if (response.status === 400 && errorDetail(text)?.code === 'invalid_cursor') {
          await this.replica.updateProgress((progress) => (progress.pullCursor = null));
          return 'reopenNow';
        }
        throw rejectionOf(response.status, text);
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      const events = new EventStreamReader();
      let began = false;
      for (;;) {
        let piece;
        try {
          piece = await reader.read();
        } catch (error) {
          if (signal.aborted) throw error;
          throw new SyncError(silent ? `the live stream was silent for ${this.liveStreamSilence} s` : `the live stream failed: ${error.message}`, { transient: true });
        }
        if (piece.done) {
          if (!began) throw new SyncError('the live stream ended before it began', { transient: true });
          return 'endedByServer'; // a restart, a JWT's expiry: open another after a short random delay
        }
        watch();
        for (const { name, data } of events.feed(piece.value)) {
          if (name === 'ready') {
            began = true;
            this.publishStatus({ connected: true });
            this.#live('receiving');
            await this.#followReadyCatalog(data, signal);
          }
          else if (name === 'changes' && !(await this.#mergeLivePage(data, signal))) {
            await reader.cancel().catch(() => {});
            return 'reopenNow';
          } else if (name === 'catalog' && this.followsServerCatalog) {
            const tag = errorless(() => /** @type {any} */ (parse(data))?.catalog);
            if (typeof tag === 'string') await this.#followCatalog(tag, signal);
            else await this.pullAll(0, signal);
          }
        }
      }
    } finally {
      clearTimeout(silence);
      signal.removeEventListener('abort', abort);
      stream.abort();
    }
  }

  /**
   * `event: ready`'s `catalog` (revision 2.10): the served catalog's version when the stream opened,
   * or `null` for none — what a device that reopened its stream without a pull follows. A `ready`
   * without the member (an older server) asks `GET /v1/catalog`, answered `304` when nothing changed.
   */
  async #followReadyCatalog(data, signal) {
    if (!this.followsServerCatalog) return;
    const ready = errorless(() => /** @type {any} */ (parse(data)));
    if (ready === null || typeof ready !== 'object') return;
    if (typeof ready.catalog === 'string') await this.#followCatalog(ready.catalog, signal);
    else if (!('catalog' in ready)) await this.#followCatalog(null, signal);
  }

  /**
   * Merges one `event: changes` page; false when it does not continue the replica's cursor. A server
   * that only announces news (`data: {}`, notify-only) gets a pull instead.
   */
  async #mergeLivePage(data, signal) {
    const page = parseBody(data);
    if (typeof page.from !== 'string') {
      await this.pullAll(0, signal);
      return true;
    }
    if (page.from !== this.replica.progress.pullCursor) return false;
    await this.#apply(page, null, true);
    this.publishStatus({ synced: true });
    return true;
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
    const { response } = await this.#timed('GET', `/v1/devices/${encodeURIComponent(this.replica.deviceID)}`, {});
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
    const { response } = await this.#timed('GET', '/v1/account', {});
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

  /** Pushes everything unsent, batch by batch (protocol.md §7). */
  async pushAll(signal) {
    await this.#firstContact();
    let restamped = false;
    for (;;) {
      const outbox = this.replica.outbox(this.pushLimit ?? this.pushBatchSize);
      if (outbox.length === 0) return;
      // At most MAX_PUSH_BODY_BYTES a push: a large outbox goes in pushes the server admits (protocol.md §7).
      const { batch, body } = pushBody(outbox);
      let response;
      let sent;
      try {
        ({ response, sent } = await this.#timed('POST', '/v1/push', { body, signal }));
      } catch (error) {
        // No answer: the server may have stored the batch, and other devices pulled it.
        await this.replica.updateProgress((progress) => recordUncertainPush(progress, batch[batch.length - 1].seq));
        throw error;
      }
      const text = await response.text();
      if (response.status === 200) {
        const result = parseBody(text);
        const offset = this.#clockCorrection(result.serverTime, sent);
        await this.replica.updateProgress((progress) => {
          if (offset !== null) progress.clockOffset = offset;
          setPushed(progress, result.highestSeq);
          noteServer(progress, result.highestSeq, result.generation);
        });
        this.publishStatus({ connected: true });
        continue;
      }
      const detail = errorDetail(text);
      if (response.status === 413 && batch.length > 1) {
        // Over a limit this server sets lower than the protocol's defaults: smaller pushes.
        this.pushLimit = Math.max(1, Math.floor(batch.length / 2));
        continue;
      }
      if (response.status === 409 && detail?.code === 'sequence_gap' && Number.isInteger(detail.expectedSeq)) {
        await this.replica.updateProgress((progress) => setPushed(progress, Math.max(0, detail.expectedSeq - 1)));
        continue;
      }
      if (response.status === 422 && detail?.code === 'clock_skew' && !restamped) {
        const offset = Number.isInteger(detail.serverTime) ? this.#clockCorrection(detail.serverTime, sent, true) : null;
        const held = Number.isInteger(detail.highestSeq) ? detail.highestSeq : 0;
        const kept = await this.replica.updateProgress((progress) => {
          if (offset !== null) progress.clockOffset = offset;
          if (held > progress.pushedSeq) setPushed(progress, held);
          return keptThroughUncertainPush(progress, held, detail.generation ?? null);
        });
        await this.replica.restampUnacknowledged(kept);
        restamped = true;
        continue;
      }
      if (response.status === 422 && detail?.code === 'invalid_change') {
        // One change the server will never take: set it aside and push the rest (protocol.md §17.2).
        const index = refusedIndex(detail);
        const change = index >= 0 && index < batch.length ? await this.replica.setAsideUnsent(batch[index].seq) : null;
        if (change) {
          const failure = rejectionOf(response.status, text);
          this.setAside.push({ change, reason: detail.message });
          this.onRefusedChange?.({ change, reason: detail.message });
          this.#fail(failure);
          continue;
        }
      }
      if (response.status >= 500) {
        await this.replica.updateProgress((progress) => recordUncertainPush(progress, batch[batch.length - 1].seq));
      }
      throw rejectionOf(response.status, text);
    }
  }

  /** Pulls page after page until the server has nothing more (protocol.md §8). */
  async pullAll(wait = 0, signal) {
    await this.#firstContact();
    let waitNow = wait;
    for (;;) {
      let path = `/v1/pull?limit=${this.pullLimit}`;
      const cursor = this.replica.progress.pullCursor;
      if (cursor) path += `&cursor=${encodeURIComponent(cursor)}`;
      if (waitNow > 0) path += `&wait=${waitNow}`;
      const { response, sent } = await this.#timed('GET', path, { signal });
      const text = await response.text();
      if (response.status !== 200) {
        if (response.status === 400 && errorDetail(text)?.code === 'invalid_cursor') {
          await this.replica.updateProgress((progress) => (progress.pullCursor = null));
          continue;
        }
        throw rejectionOf(response.status, text);
      }
      const page = parseBody(text);
      const lost = await this.#apply(page, this.#clockCorrection(page.serverTime, sent), false);
      if (!page.more) this.publishStatus({ connected: true, synced: true });
      if (this.followsServerCatalog && typeof page.catalog === 'string') await this.#followCatalog(page.catalog, signal);
      if (lost) await this.pushAll(signal);
      if (!page.more) return;
      waitNow = 0;
    }
  }

  /**
   * Merges a page (a pull's or a live stream's) and stores the cursor after it and what it says of
   * this device's pushes, in one transaction; true when the server lost pushes it had acknowledged.
   * @param {any} page
   * @param {number | null} offset
   * @param {boolean} live a live stream's page (it continues a pull that reached the end)
   */
  async #apply(page, offset, live) {
    const changes = page.changes.map((/** @type {any} */ json, /** @type {number} */ index) => {
      const change = decodeChange(json);
      const problem = violation(change);
      if (problem) throw new SyncError(`the server sent an invalid change: changes[${index}].${problem.message}`, { code: 'invalid_page' });
      return change;
    });
    return await this.replica.applyRemote(changes, (progress) => {
      if (offset !== null) progress.clockOffset = offset;
      progress.pullCursor = page.cursor;
      // The end of the account's log: this device has synced (protocol.md §17.1).
      if (live || !page.more) progress.hasSynced = true;
      if (!Number.isInteger(page.highestSeq)) return false;
      noteServer(progress, page.highestSeq, page.generation);
      // Above what we knew: a push whose answer was lost did arrive. Below: a restored server lost
      // acknowledged changes, which are pushed again with their stamps.
      const wasLost = page.highestSeq < progress.pushedSeq;
      if (page.highestSeq !== progress.pushedSeq) setPushed(progress, page.highestSeq);
      return wasLost;
    });
  }

  /** Fetches and applies the server's catalog when `tag` is neither the applied one nor a refused one. */
  async #followCatalog(tag, signal) {
    const applied = this.replica.serverCatalog?.tag ?? null;
    // No tag: whatever the server holds now, asked conditionally (`304` when it is the applied one).
    if (tag !== null && (tag === applied || tag === this.refusedCatalogTag)) return;
    const headers = applied ? { 'If-None-Match': applied } : {};
    const { response } = await this.#timed('GET', '/v1/catalog', { signal, headers });
    if (response.status === 304 || response.status === 404) return;
    const text = await response.text();
    if (response.status !== 200) throw rejectionOf(response.status, text);
    const version = response.headers.get('ETag') ?? tag ?? 'unversioned';
    try {
      await this.replica.applyServerCatalog(text, version);
    } catch (error) {
      this.refusedCatalogTag = version;
      this.lastError = new SyncError(`the server's catalog was refused: ${error.message}`, { code: 'invalid_catalog' });
    }
  }

  /**
   * The clock correction an answer calls for, or null (protocol.md §11): the server's time less the
   * midpoint of the request's round trip on the device's physical clock.
   */
  #clockCorrection(serverTime, sent, force = false) {
    if (!Number.isInteger(serverTime) || serverTime < 0 || serverTime > 2 ** 48 - 1) return null;
    const midpoint = Math.floor((sent + this.replica.physicalNow()) / 2);
    const offset = serverTime - midpoint;
    return force || Math.abs(offset - this.replica.progress.clockOffset) > 1000 ? offset : null;
  }

  /**
   * @param {string} method
   * @param {string} path
   * @param {{body?: string, signal?: AbortSignal, headers?: {[name: string]: string}}} options
   */
  async #timed(method, path, options) {
    const sent = this.replica.physicalNow();
    const response = await this.#send(method, path, options);
    return { response, sent };
  }

  /**
   * Sends a request with the bearer token, retrying after `429` (Retry-After) and `token_expired`.
   * @param {string} method
   * @param {string} path
   * @param {{body?: string, signal?: AbortSignal, headers?: {[name: string]: string}, stream?: boolean}} options
   * @returns {Promise<Response>}
   */
  async #send(method, path, { body = undefined, signal = undefined, headers = {}, stream = false } = {}) {
    let refreshed = false;
    let waitedOut = false; // a Retry-After was waited: the refusal it reported ends with an answer
    for (;;) {
      /** @type {{[name: string]: string}} */
      const requestHeaders = { Authorization: `Bearer ${await this.#currentToken()}`, ...headers };
      // What the device reports of itself (protocol.md §5): the console shows each device's status.
      const reported = contextHeader(this.replica.deviceContext ?? {});
      if (reported) requestHeaders['TipSync-Context'] = reported;
      /** @type {BodyInit | undefined} */
      let payload = body;
      if (body !== undefined) {
        requestHeaders['Content-Type'] = 'application/json';
        if (this.compressPushes && body.length >= 1024) {
          payload = await gzip(body);
          requestHeaders['Content-Encoding'] = 'gzip';
        }
      }
      let response;
      try {
        response = await this.fetch(new URL(path, this.server), { method, headers: requestHeaders, body: payload, signal });
      } catch (error) {
        if (signal?.aborted) throw error;
        throw new SyncError(`the server could not be reached: ${error.message}`, { transient: true });
      }
      if (waitedOut && response.status < 400) {
        this.lastError = null;
        this.publishStatus({ error: null, connected: true });
      }
      if (stream && response.status === 200) return response;
      // The server (or a proxy before it) says when it will take the request: wait that long, never
      // less — and say so meanwhile (protocol.md §17.4).
      if (response.status === 429 || (response.status === 503 && response.headers.has('Retry-After'))) {
        const wait = retryAfterSeconds(response.headers.get('Retry-After')) * 1000;
        this.lastError = rejectionOf(response.status, await response.text());
        this.publishStatus({ state: 'refused', error: this.lastError, nextAttemptAt: this.replica.physicalNow() + wait });
        waitedOut = true;
        await this.sleep(wait);
        continue;
      }
      if (payload !== body && (response.status === 415 || response.status === 400)) {
        // A server that predates compression, or a proxy that dropped Content-Encoding: plain from now on.
        const text = await response.clone().text();
        const code = errorDetail(text)?.code;
        if (code === 'unsupported_media_type' || code === 'malformed_json') {
          this.compressPushes = false;
          continue;
        }
      }
      if (response.status === 401 && !refreshed && this.tokenProvider) {
        const text = await response.clone().text();
        if (errorDetail(text)?.code === 'token_expired') {
          this.token = null;
          refreshed = true;
          continue;
        }
      }
      return response;
    }
  }

  async #currentToken() {
    if (this.token) return this.token;
    if (!this.tokenProvider) throw new SyncError('no token: give `token` or `tokenProvider`', { code: 'unauthorized' });
    try {
      this.token = await this.tokenProvider();
      return this.token;
    } catch (error) {
      throw new SyncError(`could not get a token from the token provider: ${error.message}`, { transient: true });
    }
  }
}

const encoder = new TextEncoder();

/**
 * The first changes of `outbox` whose push body is at most MAX_PUSH_BODY_BYTES of UTF-8 (never fewer
 * than one), and that body.
 * @param {import('./change.js').Change[]} outbox
 */
export function pushBody(outbox, maxBytes = MAX_PUSH_BODY_BYTES) {
  const texts = [];
  let bytes = '{"changes":[]}'.length;
  for (const change of outbox) {
    const text = canonicalText(encodeChange(change));
    const size = encoder.encode(text).length + (texts.length > 0 ? 1 : 0);
    if (texts.length > 0 && bytes + size > maxBytes) break;
    texts.push(text);
    bytes += size;
  }
  return { batch: outbox.slice(0, texts.length), body: '{"changes":[' + texts.join(',') + ']}' };
}

async function gzip(text) {
  const stream = new Blob([text]).stream().pipeThrough(new globalThis.CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A server answer's JSON, read with the number model (no integer silently rounded). */
function parseBody(text) {
  try {
    return /** @type {any} */ (parse(text));
  } catch (error) {
    throw new SyncError(`unexpected response from the server: ${error.message}`, { code: 'invalid_response', transient: true });
  }
}

/** `body()`, or undefined when it throws. */
function errorless(body) {
  try {
    return body();
  } catch {
    return undefined;
  }
}

/**
 * Reads a `text/event-stream` body as it arrives: feed it text in whatever pieces it comes, get back
 * the complete events. Lines end in `\n`, `\r\n` or `\r`; comments and other fields are skipped.
 */
export class EventStreamReader {
  constructor() {
    this.buffer = '';
    /** @type {string | null} */
    this.name = null;
    /** @type {string[]} */
    this.data = [];
  }

  /** @param {string} text @returns {{name: string, data: string}[]} */
  feed(text) {
    this.buffer += text;
    const events = [];
    let start = 0;
    for (;;) {
      const match = /\r\n|\r|\n/g;
      match.lastIndex = start;
      const found = match.exec(this.buffer);
      // A lone \r at the very end may be the first half of \r\n: wait for the next piece.
      if (!found || (found[0] === '\r' && found.index === this.buffer.length - 1)) break;
      const line = this.buffer.slice(start, found.index);
      start = found.index + found[0].length;
      if (line === '') {
        if (this.name !== null || this.data.length > 0) events.push({ name: this.name ?? 'message', data: this.data.join('\n') });
        this.name = null;
        this.data = [];
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') this.name = value;
        else if (field === 'data') this.data.push(value);
      }
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }
}

function errorDetail(text) {
  try {
    const body = /** @type {any} */ (parse(text));
    return body?.error ?? null;
  } catch {
    return null;
  }
}

function rejectionOf(status, text) {
  const detail = errorDetail(text);
  return new SyncError(detail?.message ?? `HTTP ${status}`, { status, code: detail?.code ?? 'unknown' });
}

async function rejection(response) {
  return rejectionOf(response.status, await response.text());
}

function asSyncError(error) {
  if (error instanceof SyncError) return error;
  return new SyncError(String(error?.message ?? error), { code: 'client_error' });
}

/**
 * The index in the batch of the change an `invalid_change` answer refuses: its `change` member
 * (protocol revision 2.9); -1 when the answer has a `field` but no `change` (the batch's numbering);
 * from a server before 2.9, which has neither, the message's start (`changes[3].value: …`).
 * @param {{change?: number, field?: string, message?: string}} detail
 * @returns {number}
 */
export function refusedIndex(detail) {
  if (Number.isInteger(detail.change)) return /** @type {number} */ (detail.change);
  if (typeof detail.field === 'string') return -1;
  const match = /^changes\[(\d+)\](?!\.seq)/.exec(detail.message ?? '');
  return match ? Number(match[1]) : -1;
}
