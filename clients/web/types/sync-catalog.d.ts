/** @typedef {import('./sync.js').SyncClient} SyncClient */
/**
 * `event: ready`'s `catalog` (revision 2.10): the served catalog's version when the stream opened,
 * or `null` for none — what a device that reopened its stream without a pull follows. A `ready`
 * without the member (an older server) asks `GET /v1/catalog`, answered `304` when nothing changed.
 * @param {SyncClient} client
 * @param {string} data
 * @param {AbortSignal} [signal]
 */
export function followReadyCatalog(client: SyncClient, data: string, signal?: AbortSignal | undefined): Promise<void>;
/**
 * Fetches and applies the server's catalog when `tag` is neither the applied one nor a refused one.
 * @param {SyncClient} client
 * @param {string | null} tag
 * @param {AbortSignal} [signal]
 */
export function followCatalog(client: SyncClient, tag: string | null, signal?: AbortSignal | undefined): Promise<void>;
export type SyncClient = import('./sync.js').SyncClient;
