/** @typedef {import('./sync.js').SyncClient} SyncClient */
/** @typedef {import('./sync.js').SyncParts} SyncParts */
/**
 * Pulls page after page until the server has nothing more (protocol.md §8).
 * @param {SyncClient} client
 * @param {SyncParts} parts
 * @param {number} [wait]
 * @param {AbortSignal} [signal]
 */
export function pullAll(client: SyncClient, parts: SyncParts, wait?: number | undefined, signal?: AbortSignal | undefined): Promise<void>;
/**
 * Merges a page (a pull's or a live stream's) and stores the cursor after it and what it says of
 * this device's pushes, in one transaction; true when the server lost pushes it had acknowledged.
 * @param {SyncClient} client
 * @param {any} page
 * @param {number | null} offset
 * @param {boolean} live a live stream's page (it continues a pull that reached the end)
 */
export function applyPage(client: SyncClient, page: any, offset: number | null, live: boolean): Promise<boolean | undefined>;
/**
 * Follows one live stream until it ends: merges each page that continues the cursor the replica
 * holds (its `from`), with the cursor after it, in one transaction. A page that does not continue
 * it ends the stream; the next opens at the replica's cursor and the server catches it up. A
 * stream silent for `liveStreamSilence` seconds (heartbeats come every 15 s) is taken for lost.
 * Resolves `'endedByServer'` when the server ended a stream that had begun, else `'reopenNow'`.
 * @param {SyncClient} client
 * @param {SyncParts} parts
 * @returns {Promise<'endedByServer' | 'reopenNow'>}
 * @param {AbortSignal} signal
 */
export function followLiveStream(client: SyncClient, parts: SyncParts, signal: AbortSignal): Promise<'endedByServer' | 'reopenNow'>;
/**
 * Merges one `event: changes` page; false when it does not continue the replica's cursor. A server
 * that only announces news (`data: {}`, notify-only) gets a pull instead.
 * @param {SyncClient} client
 * @param {string} data
 * @param {AbortSignal} [signal]
 */
export function mergeLivePage(client: SyncClient, data: string, signal?: AbortSignal | undefined): Promise<boolean>;
export type SyncClient = import('./sync.js').SyncClient;
export type SyncParts = import('./sync.js').SyncParts;
