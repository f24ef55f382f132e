export { EventStreamReader } from "./event-stream.js";
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
    constructor(replica: Replica, options: SyncOptions);
    replica: import("./replica.js").Replica;
    server: URL;
    token: string | null;
    tokenProvider: (() => Promise<string>) | null;
    /** @type {typeof globalThis.fetch} */
    fetch: typeof globalThis.fetch;
    sleep: (milliseconds: number) => Promise<void>;
    random: () => number;
    pushBatchSize: number;
    pullLimit: number;
    longPollSeconds: number;
    live: boolean;
    liveStreamSilence: number;
    followsServerCatalog: boolean;
    compressPushes: boolean;
    initialBackoff: number;
    maximumBackoff: number;
    /**
     * The latest failure, if the latest round failed.
     * @type {SyncError | null}
     */
    lastError: SyncError | null;
    /**
     * A server catalog version refused as invalid (not fetched again).
     * @type {string | null}
     */
    refusedCatalogTag: string | null;
    /** @type {AbortController | null} */
    controller: AbortController | null;
    /** @type {Set<(status: SyncStatus, before: SyncStatus) => void>} */
    statusListeners: Set<(status: SyncStatus, before: SyncStatus) => void>;
    /**
     * Changes the server refused and this client set aside (protocol.md §17.2), oldest first.
     * @type {{change: import('./change.js').Change, reason: string}[]}
     */
    setAside: {
        change: import('./change.js').Change;
        reason: string;
    }[];
    /**
     * Told of each change set aside.
     * @type {((refused: {change: import('./change.js').Change, reason: string}) => void) | null}
     */
    onRefusedChange: ((refused: {
        change: import('./change.js').Change;
        reason: string;
    }) => void) | null;
    firstSyncTimeout: number;
    /**
     * The status now; {@link onStatus} is told of every change.
     * @type {SyncStatus}
     */
    status: SyncStatus;
    /**
     * Changes a push may hold after a `413` (halved each time); null: `pushBatchSize`.
     * @type {number | null}
     */
    pushLimit: number | null;
    /**
     * Calls `listener(status, before)` on every change of {@link status}.
     * @returns {() => void} stop
     * @param {(status: SyncStatus, before: SyncStatus) => void} listener
     */
    onStatus(listener: (status: SyncStatus, before: SyncStatus) => void): () => void;
    /**
     * Recomputes the status and tells listeners when it changed. `connected`: an exchange succeeded —
     * the state becomes `connected` only once no failure is outstanding (a round clears it), so a round
     * whose pull works but whose push is refused never flashes `connected`; `state`: a failure's state.
     * `nextAttemptAt`: when a retry is due (`null`: none; left out: unchanged).
     * @param {{connected?: boolean, state?: SyncState, error?: SyncError | null, synced?: boolean, nextAttemptAt?: number | null}} [what]
     */
    publishStatus(what?: {
        connected?: boolean | undefined;
        state?: SyncState | undefined;
        error?: SyncError | null | undefined;
        synced?: boolean | undefined;
        nextAttemptAt?: number | null | undefined;
    } | undefined): void;
    /**
     * Resolves true once this device has completed its first sync (now or before), false when
     * `timeout` milliseconds pass first. Only waits: the sync is {@link run}'s.
     * @param {number} timeout
     * @returns {Promise<boolean>}
     */
    waitForFirstSync(timeout: number): Promise<boolean>;
    /**
     * One round: push everything unsent, then pull until the server has nothing more. A push the
     * server refuses does not keep the pull from happening (changes made elsewhere arrive whatever
     * this device's outbox holds); its refusal is thrown after the pull.
     */
    syncOnce(): Promise<void>;
    /**
     * Pushes everything unsent, batch by batch (protocol.md §7; `sync-push.js`).
     * @param {AbortSignal} [signal]
     */
    pushAll(signal?: AbortSignal | undefined): Promise<void>;
    /**
     * Pulls page after page until the server has nothing more (protocol.md §8; `sync-pull.js`).
     * @param {number} [wait] seconds the first pull may wait for news (a long-poll)
     * @param {AbortSignal} [signal]
     */
    pullAll(wait?: number | undefined, signal?: AbortSignal | undefined): Promise<void>;
    /** Returns once every local change made before the call is on the server. */
    pushPending(): Promise<void>;
    /**
     * Syncs until {@link stop}: a full round, then live updates (or long-polls) alongside a push after
     * every local change. Every failure — no answer, a `5xx`, a `429`, a refused credential (`401`,
     * `403`: `tokenProvider` is asked again first), an answer that does not parse — is retried after a
     * delay drawn from a range that doubles with each failure in a row up to `maximumBackoff`
     * (protocol.md §17.3), for as long as the client runs. Only an answer that can never change
     * (`account_erased`) ends it: `status.state` is then `stopped` and the promise rejects.
     */
    run(): Promise<void>;
    /** Ends {@link run} (and any request it has open). */
    stop(): void;
    #private;
}
export type Replica = import('./replica.js').Replica;
/**
 * `live`: receive changes on `/v1/live` streams that carry them (else long-polls);
 * `liveStreamSilence`: seconds a live stream may stay silent before it is taken for lost (60); `followsServerCatalog`: apply the
 * catalog operators upload; `initialBackoff` (1000) and `maximumBackoff` (60000): the base and maximum of
 * the retry delays, in milliseconds (protocol.md §17.3, `backoff.js`); `sleep` and `random` (a draw
 * in 0…1 that picks each delay within its range) are injected by tests;
 * `firstSyncTimeout`: seconds a device that never completed a sync holds back tips that would be
 * available (5; 0: no hold; protocol.md §17.1).
 */
export type SyncOptions = {
    server: string | URL;
    token?: string | undefined;
    tokenProvider?: (() => Promise<string>) | undefined;
    fetch?: typeof fetch | undefined;
    sleep?: ((milliseconds: number) => Promise<void>) | undefined;
    random?: (() => number) | undefined;
    pushBatchSize?: number | undefined;
    pullLimit?: number | undefined;
    longPollSeconds?: number | undefined;
    live?: boolean | undefined;
    liveStreamSilence?: number | undefined;
    followsServerCatalog?: boolean | undefined;
    compressPushes?: boolean | undefined;
    initialBackoff?: number | undefined;
    maximumBackoff?: number | undefined;
    firstSyncTimeout?: number | undefined;
    onRefusedChange?: ((refused: {
        change: import('./change.js').Change;
        reason: string;
    }) => void) | undefined;
};
/**
 * Where the exchange with the server stands (protocol.md §17.4): `connecting` before the first
 * answer; `connected`; `offline` (no answer); `refused` (the server refused: `lastError.code`,
 * `nextAttemptAt`); `stopped` (the app stopped it, or the account was erased).
 */
export type SyncState = 'connecting' | 'connected' | 'offline' | 'refused' | 'stopped';
/**
 * `state`: see {@link SyncState }; `nextAttemptAt`: while offline or refused, when the client tries
 * again (ms since 1970);
 * `connected`: `state` is `connected`; `hasSynced`: a pull reached the end of
 * the account's log at least once; `heldForFirstSync`: tips are held back for it; `pendingChanges`:
 * local changes not yet acknowledged; `lastSyncedAt`: when a page was last merged (ms since 1970);
 * `lastError`: why the latest attempt failed, until one succeeds.
 */
export type SyncStatus = {
    state: SyncState;
    connected: boolean;
    hasSynced: boolean;
    heldForFirstSync: boolean;
    pendingChanges: number;
    lastSyncedAt: number | null;
    lastError: SyncError | null;
    nextAttemptAt: number | null;
};
/**
 * What the sync client's parts may do to its private state: record a failure, note one half of
 * being live (for `run`'s backoff), check the device's log on the server before the first exchange.
 */
export type SyncParts = {
    fail: (error: SyncError) => void;
    noteLive: (half: 'pushed' | 'receiving') => void;
    firstContact: () => Promise<void>;
};
import { SyncError } from "./sync-error.js";
export { SyncError, refusedIndex } from "./sync-error.js";
export { MAX_PUSH_BODY_BYTES, pushBody } from "./sync-push.js";
