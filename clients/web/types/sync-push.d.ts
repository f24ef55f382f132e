/**
 * The first changes of `outbox` whose push body is at most MAX_PUSH_BODY_BYTES of UTF-8 (never fewer
 * than one), and that body.
 * @param {import('./change.js').Change[]} outbox
 */
export function pushBody(outbox: import('./change.js').Change[], maxBytes?: number): {
    batch: import("./change.js").Change[];
    body: string;
};
/**
 * Pushes everything unsent, batch by batch (protocol.md §7).
 * @param {SyncClient} client
 * @param {SyncParts} parts
 * @param {AbortSignal} [signal]
 */
export function pushAll(client: SyncClient, parts: SyncParts, signal?: AbortSignal | undefined): Promise<void>;
/** @typedef {import('./sync.js').SyncClient} SyncClient */
/** @typedef {import('./sync.js').SyncParts} SyncParts */
/** The most bytes of body a client puts in one push (protocol.md §7). */
export const MAX_PUSH_BODY_BYTES: 1048576;
export type SyncClient = import('./sync.js').SyncClient;
export type SyncParts = import('./sync.js').SyncParts;
