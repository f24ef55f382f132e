// The sync client following the server's catalog (protocol.md §13): fetched when a page or a
// stream names a version this replica has not applied, conditionally, and never again once refused.

import { parse } from './json.js';
import { errorless, rejectionOf, SyncError } from './sync-error.js';
import { timed } from './sync-requests.js';
import { messageOf } from './message.js';

/** @typedef {import('./sync.js').SyncClient} SyncClient */

/**
 * `event: ready`'s `catalog` (revision 2.10): the served catalog's version when the stream opened,
 * or `null` for none — what a device that reopened its stream without a pull follows. A `ready`
 * without the member (an older server) asks `GET /v1/catalog`, answered `304` when nothing changed.
 * @param {SyncClient} client
 * @param {string} data
 * @param {AbortSignal} [signal]
 */
export async function followReadyCatalog(client, data, signal) {
  if (!client.followsServerCatalog) return;
  const ready = errorless(() => /** @type {any} */ (parse(data)));
  if (ready === null || typeof ready !== 'object') return;
  if (typeof ready.catalog === 'string') await followCatalog(client, ready.catalog, signal);
  else if (!('catalog' in ready)) await followCatalog(client, null, signal);
}

/**
 * Fetches and applies the server's catalog when `tag` is neither the applied one nor a refused one.
 * @param {SyncClient} client
 * @param {string | null} tag
 * @param {AbortSignal} [signal]
 */
export async function followCatalog(client, tag, signal) {
  const applied = client.replica.serverCatalog?.tag ?? null;
  // No tag: whatever the server holds now, asked conditionally (`304` when it is the applied one).
  if (tag !== null && (tag === applied || tag === client.refusedCatalogTag)) return;
  /** @type {{[name: string]: string}} */
  const headers = applied ? { 'If-None-Match': applied } : {};
  const { response } = await timed(client, 'GET', '/v1/catalog', { signal, headers });
  if (response.status === 304 || response.status === 404) return;
  const text = await response.text();
  if (response.status !== 200) throw rejectionOf(response.status, text);
  const version = response.headers.get('ETag') ?? tag ?? 'unversioned';
  try {
    await client.replica.applyServerCatalog(text, version);
  } catch (error) {
    client.refusedCatalogTag = version;
    client.lastError = new SyncError(`the server's catalog was refused: ${messageOf(error)}`, { code: 'invalid_catalog' });
  }
}
