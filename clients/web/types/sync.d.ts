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
 * }} SyncOptions
 * `live`: receive changes on `/v1/live` streams that carry them (else long-polls);
 * `liveStreamSilence`: seconds a live stream may stay silent before it is taken for lost (60); `followsServerCatalog`: apply the
 * catalog operators upload; backoffs in milliseconds; `sleep` and `random` are injected by tests.
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
    lastError: SyncError;
    /** A server catalog version refused as invalid (not fetched again). @type {string | null} */
    refusedCatalogTag: any;
    /** @type {AbortController | null} */
    controller: AbortController | null;
    /** One round: push everything unsent, then pull until the server has nothing more. */
    syncOnce(): Promise<void>;
    /** Returns once every local change made before the call is on the server. */
    pushPending(): Promise<void>;
    /**
     * Syncs until {@link stop}: a full round, then live updates (or long-polls) alongside a push after
     * every local change. Transient failures back off (doubling, with jitter) and retry; others end it.
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
 * catalog operators upload; backoffs in milliseconds; `sleep` and `random` are injected by tests.
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
};
