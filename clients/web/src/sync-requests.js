// The sync client's requests (protocol.md §5): the bearer token (asked of the provider again after
// `token_expired`), the device's context header, gzip for large bodies, `429` and `503` waited out
// as `Retry-After` says, and the clock correction an answer's `serverTime` calls for (§11).

import { retryAfterSeconds } from './backoff.js';
import { contextHeader } from './context.js';
import { errorDetail, rejectionOf, SyncError } from './sync-error.js';
import { messageOf } from './message.js';

/** @typedef {import('./sync.js').SyncClient} SyncClient */

/**
 * The clock correction an answer calls for, or null (protocol.md §11): the server's time less the
 * midpoint of the request's round trip on the device's physical clock.
 * @param {SyncClient} client
 * @param {number} serverTime
 * @param {number} sent
 */
export function clockCorrection(client, serverTime, sent, force = false) {
  if (!Number.isInteger(serverTime) || serverTime < 0 || serverTime > 2 ** 48 - 1) return null;
  const midpoint = Math.floor((sent + client.replica.physicalNow()) / 2);
  const offset = serverTime - midpoint;
  return force || Math.abs(offset - client.replica.progress.clockOffset) > 1000 ? offset : null;
}

/**
 * @param {SyncClient} client
 * @param {string} method
 * @param {string} path
 * @param {{body?: string, signal?: AbortSignal, headers?: {[name: string]: string}}} options
 */
export async function timed(client, method, path, options) {
  const sent = client.replica.physicalNow();
  const response = await send(client, method, path, options);
  return { response, sent };
}

/**
 * Sends a request with the bearer token, retrying after `429` (Retry-After) and `token_expired`.
 * @param {SyncClient} client
 * @param {string} method
 * @param {string} path
 * @param {{body?: string, signal?: AbortSignal, headers?: {[name: string]: string}, stream?: boolean}} options
 * @returns {Promise<Response>}
 */
export async function send(client, method, path, { body = undefined, signal = undefined, headers = {}, stream = false } = {}) {
  let refreshed = false;
  let waitedOut = false; // a Retry-After was waited: the refusal it reported ends with an answer
  for (;;) {
    /** @type {{[name: string]: string}} */
    const requestHeaders = { Authorization: `Bearer ${await currentToken(client)}`, ...headers };
    // What the device reports of itself (protocol.md §5): the console shows each device's status.
    const reported = contextHeader(client.replica.deviceContext ?? {});
    if (reported) requestHeaders['TipSync-Context'] = reported;
    /** @type {BodyInit | undefined} */
    let payload = body;
    if (body !== undefined) {
      requestHeaders['Content-Type'] = 'application/json';
      if (client.compressPushes && body.length >= 1024) {
        payload = await gzip(body);
        requestHeaders['Content-Encoding'] = 'gzip';
      }
    }
    let response;
    try {
      response = await client.fetch(new URL(path, client.server), { method, headers: requestHeaders, body: payload, signal });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new SyncError(`the server could not be reached: ${messageOf(error)}`, { transient: true });
    }
    if (waitedOut && response.status < 400) {
      client.lastError = null;
      client.publishStatus({ error: null, connected: true });
    }
    if (stream && response.status === 200) return response;
    // The server (or a proxy before it) says when it will take the request: wait that long, never
    // less — and say so meanwhile (protocol.md §17.4).
    if (response.status === 429 || (response.status === 503 && response.headers.has('Retry-After'))) {
      const wait = retryAfterSeconds(response.headers.get('Retry-After')) * 1000;
      client.lastError = rejectionOf(response.status, await response.text());
      client.publishStatus({ state: 'refused', error: client.lastError, nextAttemptAt: client.replica.physicalNow() + wait });
      waitedOut = true;
      await client.sleep(wait);
      continue;
    }
    if (payload !== body && (response.status === 415 || response.status === 400)) {
      // A server that predates compression, or a proxy that dropped Content-Encoding: plain from now on.
      const text = await response.clone().text();
      const code = errorDetail(text)?.code;
      if (code === 'unsupported_media_type' || code === 'malformed_json') {
        client.compressPushes = false;
        continue;
      }
    }
    if (response.status === 401 && !refreshed && client.tokenProvider) {
      const text = await response.clone().text();
      if (errorDetail(text)?.code === 'token_expired') {
        client.token = null;
        refreshed = true;
        continue;
      }
    }
    return response;
  }
}

/** @param {SyncClient} client */
export async function currentToken(client) {
  if (client.token) return client.token;
  if (!client.tokenProvider) throw new SyncError('no token: give `token` or `tokenProvider`', { code: 'unauthorized' });
  try {
    client.token = await client.tokenProvider();
    return client.token;
  } catch (error) {
    throw new SyncError(`could not get a token from the token provider: ${messageOf(error)}`, { transient: true });
  }
}

/** @param {string} text */
async function gzip(text) {
  const Compression = /** @type {NonNullable<typeof compressionStream>} */ (compressionStream);
  const stream = new Blob([text]).stream().pipeThrough(new Compression('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * The platform's `CompressionStream` (browsers, Node 18+), or undefined where there is none. Read
 * through this name because the TypeScript `lib` the types are checked with does not declare it.
 * @type {(new (format: string) => TransformStream<Uint8Array, Uint8Array>) | undefined}
 */
export const compressionStream = /** @type {{CompressionStream?: any}} */ (globalThis).CompressionStream;
