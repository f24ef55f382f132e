/** @typedef {import('./sync.js').SyncClient} SyncClient */
/**
 * `event: ready`'s `catalog` (revision 2.10): the served catalog's version when the stream opened,
 * or `null` for none — what a device that reopened its stream without a pull follows. A `ready`
 * without the member (an older server) asks `GET /v1/catalog`, answered `304` when nothing changed.
 * @param {SyncClient} client
 */
export function followReadyCatalog(client: SyncClient, data: any, signal: any): Promise<void>;
/**
 * Fetches and applies the server's catalog when `tag` is neither the applied one nor a refused one.
 * @param {SyncClient} client
 */
export function followCatalog(client: SyncClient, tag: any, signal: any): Promise<void>;
export type SyncClient = import('./sync.js').SyncClient;
