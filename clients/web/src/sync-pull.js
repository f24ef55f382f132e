// The sync client's pull (protocol.md §8, §9): pages after a cursor until the end, merged with the
// cursor after them in one transaction; live streams that carry pages as they happen.

import { decodeChange, violation } from './change.js';
import { parse } from './json.js';
import { EventStreamReader } from './event-stream.js';
import { noteServer, setPushed } from './progress.js';
import { followCatalog, followReadyCatalog } from './sync-catalog.js';
import { errorDetail, errorless, parseBody, rejectionOf, SyncError } from './sync-error.js';
import { clockCorrection, send, timed } from './sync-requests.js';
import { messageOf } from './message.js';

/** @typedef {import('./sync.js').SyncClient} SyncClient */
/** @typedef {import('./sync.js').SyncParts} SyncParts */

/**
 * Pulls page after page until the server has nothing more (protocol.md §8).
 * @param {SyncClient} client
 * @param {SyncParts} parts
 * @param {number} [wait]
 * @param {AbortSignal} [signal]
 */
export async function pullAll(client, parts, wait = 0, signal) {
  await parts.firstContact();
  let waitNow = wait;
  for (;;) {
    let path = `/v1/pull?limit=${client.pullLimit}`;
    const cursor = client.replica.progress.pullCursor;
    if (cursor) path += `&cursor=${encodeURIComponent(cursor)}`;
    if (waitNow > 0) path += `&wait=${waitNow}`;
    const { response, sent } = await timed(client, 'GET', path, { signal });
    const text = await response.text();
    if (response.status !== 200) {
      if (response.status === 400 && errorDetail(text)?.code === 'invalid_cursor') {
        await client.replica.updateProgress((progress) => (progress.pullCursor = null));
        continue;
      }
      throw rejectionOf(response.status, text);
    }
    const page = parseBody(text);
    const lost = await applyPage(client, page, clockCorrection(client, page.serverTime, sent), false);
    if (!page.more) client.publishStatus({ connected: true, synced: true });
    if (client.followsServerCatalog && typeof page.catalog === 'string') await followCatalog(client, page.catalog, signal);
    if (lost) await client.pushAll(signal);
    if (!page.more) return;
    waitNow = 0;
  }
}

/**
 * Merges a page (a pull's or a live stream's) and stores the cursor after it and what it says of
 * this device's pushes, in one transaction; true when the server lost pushes it had acknowledged.
 * @param {SyncClient} client
 * @param {any} page
 * @param {number | null} offset
 * @param {boolean} live a live stream's page (it continues a pull that reached the end)
 */
export async function applyPage(client, page, offset, live) {
  const changes = page.changes.map((/** @type {any} */ json, /** @type {number} */ index) => {
    const change = decodeChange(json);
    const problem = violation(change);
    if (problem) throw new SyncError(`the server sent an invalid change: changes[${index}].${problem.message}`, { code: 'invalid_page' });
    return change;
  });
  return await client.replica.applyRemote(changes, (progress) => {
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
export async function followLiveStream(client, parts, signal) {
  const cursor = client.replica.progress.pullCursor;
  if (!cursor) {
    await client.pullAll(0, signal); // a stream starts at a cursor: the round that mints one
    return 'reopenNow';
  }
  const stream = new AbortController();
  const abort = () => stream.abort();
  signal.addEventListener('abort', abort);
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let silence;
  let silent = false;
  const watch = () => {
    clearTimeout(silence);
    silence = setTimeout(() => {
      silent = true;
      stream.abort();
    }, client.liveStreamSilence * 1000);
  };
  try {
    watch();
    const path = `/v1/live?limit=${client.pullLimit}&cursor=${encodeURIComponent(cursor)}`;
    let response;
    try {
      response = await send(client, 'GET', path, { signal: stream.signal, headers: { Accept: 'text/event-stream' }, stream: true });
    } catch (error) {
      if (silent) throw new SyncError('the live stream did not answer', { transient: true });
      throw error;
    }
    if (response.status !== 200) {
      const text = await response.text();
      if (response.status === 400 && errorDetail(text)?.code === 'invalid_cursor') {
        await client.replica.updateProgress((progress) => (progress.pullCursor = null));
        return 'reopenNow';
      }
      throw rejectionOf(response.status, text);
    }
    // A 200 answer to a stream request has a body.
    const body = /** @type {ReadableStream<Uint8Array>} */ (response.body);
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    const events = new EventStreamReader();
    let began = false;
    for (;;) {
      let piece;
      try {
        piece = await reader.read();
      } catch (error) {
        if (signal.aborted) throw error;
        throw new SyncError(silent ? `the live stream was silent for ${client.liveStreamSilence} s` : `the live stream failed: ${messageOf(error)}`, { transient: true });
      }
      if (piece.done) {
        if (!began) throw new SyncError('the live stream ended before it began', { transient: true });
        return 'endedByServer'; // a restart, a JWT's expiry: open another after a short random delay
      }
      watch();
      for (const { name, data } of events.feed(piece.value)) {
        if (name === 'ready') {
          began = true;
          client.publishStatus({ connected: true });
          parts.noteLive('receiving');
          await followReadyCatalog(client, data, signal);
        }
        else if (name === 'changes' && !(await mergeLivePage(client, data, signal))) {
          await reader.cancel().catch(() => {});
          return 'reopenNow';
        } else if (name === 'catalog' && client.followsServerCatalog) {
          const tag = errorless(() => /** @type {any} */ (parse(data))?.catalog);
          if (typeof tag === 'string') await followCatalog(client, tag, signal);
          else await client.pullAll(0, signal);
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
 * Merges one `event: changes` page; false when it does not continue the replica's cursor. A server
 * that only announces news (`data: {}`, notify-only) gets a pull instead.
 * @param {SyncClient} client
 * @param {string} data
 * @param {AbortSignal} [signal]
 */
export async function mergeLivePage(client, data, signal) {
  const page = parseBody(data);
  if (typeof page.from !== 'string') {
    await client.pullAll(0, signal);
    return true;
  }
  if (page.from !== client.replica.progress.pullCursor) return false;
  await applyPage(client, page, null, true);
  client.publishStatus({ synced: true });
  return true;
}
