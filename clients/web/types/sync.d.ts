/** @typedef {import('./replica.js').Replica} Replica */
/** A failure of sync; `transient` ones are retried with backoff, others stop {@link SyncClient.run}. */
export class SyncError extends Error {
    /**
     * @param {string} message
     * @param {{status?: number, code?: string, transient?: boolean}} details
     */
    constructor(message: string, { status, code, transient }?: {
        status?: number;
        code?: string;
        transient?: boolean;
    });
    status: number;
    code: string;
    transient: boolean;
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
 * @typedef {{
 *   connected: boolean, hasSynced: boolean, heldForFirstSync: boolean, pendingChanges: number,
 *   lastSyncedAt: number | null, lastError: SyncError | null,
 * }} SyncStatus
 * `connected`: the latest exchange with the server succeeded; `hasSynced`: a pull reached the end of
 * the account's log at least once; `heldForFirstSync`: tips are held back for it; `pendingChanges`:
 * local changes not yet acknowledged; `lastSyncedAt`: when a page was last merged (ms since 1970);
 * `lastError`: why the latest attempt failed, until one succeeds.
 */
/** Keeps a replica in sync with a TipSync server. */
export class SyncClient {
    /** @param {Replica} replica @param {SyncOptions} options */
    constructor(replica: Replica, options: SyncOptions);
    replica: import("./replica.js").Replica;
    server: URL;
    token: string;
    tokenProvider: () => Promise<string>;
    fetch: any;
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
    /** The latest failure, if the latest round failed. @type {SyncError | null} */
    lastError: any;
    /** A server catalog version refused as invalid (not fetched again). @type {string | null} */
    refusedCatalogTag: any;
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
    /** Told of each change set aside. @type {((refused: {change: import('./change.js').Change, reason: string}) => void) | null} */
    onRefusedChange: (refused: {
        change: import('./change.js').Change;
        reason: string;
    }) => void;
    firstSyncTimeout: number;
    /** The status now; {@link onStatus} is told of every change. @type {SyncStatus} */
    status: {
        connected: boolean;
        hasSynced: boolean;
        heldForFirstSync: boolean;
        pendingChanges: number;
        lastSyncedAt: any;
        lastError: any;
    };
    /** Calls `listener(status, before)` on every change of {@link status}. @returns {() => void} stop */
    onStatus(listener: any): () => boolean;
    /**
     * Recomputes the status and tells listeners when it changed.
     * @param {{connected?: boolean, error?: SyncError | null, synced?: boolean}} [what]
     */
    publishStatus(what?: {
        connected?: boolean;
        error?: SyncError | null;
        synced?: boolean;
    }): void;
    /**
     * Resolves true once this device has completed its first sync (now or before), false when
     * `timeout` milliseconds pass first. Only waits: the sync is {@link run}'s.
     */
    waitForFirstSync(timeout: any): Promise<boolean>;
    /** One round: push everything unsent, then pull until the server has nothing more. */
    syncOnce(): Promise<void>;
    /** Returns once every local change made before the call is on the server. */
    pushPending(): Promise<void>;
    /**
     * Syncs until {@link stop}: a full round, then live updates (or long-polls) alongside a push after
     * every local change. Transient failures back off (a delay drawn from a range that doubles with
     * each failure in a row, protocol.md §17.3) and retry; others end it.
     */
    run(): Promise<void>;
    /** Ends {@link run} (and any request it has open). */
    stop(): void;
    /** Pushes everything unsent, batch by batch (protocol.md §7). */
    pushAll(signal: any): Promise<void>;
    /** Pulls page after page until the server has nothing more (protocol.md §8). */
    pullAll(wait: number, signal: any): Promise<void>;
    #private;
}
/**
 * Reads a `text/event-stream` body as it arrives: feed it text in whatever pieces it comes, get back
 * the complete events. Lines end in `\n`, `\r\n` or `\r`; comments and other fields are skipped.
 */
export class EventStreamReader {
    buffer: string;
    /** @type {string | null} */
    name: string | null;
    /** @type {string[]} */
    data: string[];
    /** @param {string} text @returns {{name: string, data: string}[]} */
    feed(text: string): {
        name: string;
        data: string;
    }[];
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
    token?: string;
    tokenProvider?: () => Promise<string>;
    fetch?: typeof globalThis.fetch;
    sleep?: (milliseconds: number) => Promise<void>;
    random?: () => number;
    pushBatchSize?: number;
    pullLimit?: number;
    longPollSeconds?: number;
    live?: boolean;
    liveStreamSilence?: number;
    followsServerCatalog?: boolean;
    compressPushes?: boolean;
    initialBackoff?: number;
    maximumBackoff?: number;
    firstSyncTimeout?: number;
    onRefusedChange?: (refused: {
        change: import('./change.js').Change;
        reason: string;
    }) => void;
};
/**
 * `connected`: the latest exchange with the server succeeded; `hasSynced`: a pull reached the end of
 * the account's log at least once; `heldForFirstSync`: tips are held back for it; `pendingChanges`:
 * local changes not yet acknowledged; `lastSyncedAt`: when a page was last merged (ms since 1970);
 * `lastError`: why the latest attempt failed, until one succeeds.
 */
export type SyncStatus = {
    connected: boolean;
    hasSynced: boolean;
    heldForFirstSync: boolean;
    pendingChanges: number;
    lastSyncedAt: number | null;
    lastError: SyncError | null;
};
