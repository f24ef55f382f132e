// How sync fails: the error every part of the sync client throws, and how an answer's error body
// (protocol.md §10) is read — its code, its message, and for `invalid_change` the refused change.

import { parse } from './json.js';
import { messageOf } from './message.js';

/**
 * The answers that can never change, and so end {@link SyncClient.run} (protocol.md §17.3): the
 * account was erased (syncing on would upload what its owner erased), or the server address is not
 * one a request can be sent to. Every other failure is retried with backoff, forever.
 */
const ENDS_SYNC = new Set(['account_erased', 'invalid_server_url']);

/**
 * A failure of sync. {@link SyncClient.run} retries every one with backoff except those that
 * `endsSync` (an erased account); `transient` is their opposite, kept for callers that read it.
 */
export class SyncError extends Error {
  /**
   * @param {string} message
   * @param {{status?: number, code?: string, transient?: boolean}} details
   */
  constructor(message, { status = 0, code = 'unreachable', transient = false } = {}) {
    super(message);
    this.name = 'SyncError';
    this.status = status;
    this.code = code;
    /** The answer can never change: {@link SyncClient.run} ends. */
    this.endsSync = ENDS_SYNC.has(code);
    this.transient = transient || !this.endsSync;
  }

  /** The server answered with a refusal (as opposed to no answer at all). */
  get isRefusal() {
    return this.status > 0;
  }
}

/**
 * A server answer's JSON, read with the number model (no integer silently rounded).
 * @param {string} text
 * @returns {any}
 */
export function parseBody(text) {
  try {
    return /** @type {any} */ (parse(text));
  } catch (error) {
    throw new SyncError(`unexpected response from the server: ${messageOf(error)}`, { code: 'invalid_response', transient: true });
  }
}

/**
 * `body()`, or undefined when it throws.
 * @template T
 * @param {() => T} body
 * @returns {T | undefined}
 */
export function errorless(body) {
  try {
    return body();
  } catch {
    return undefined;
  }
}

/**
 * The `error` object of an error answer's JSON, or null.
 * @param {string} text
 */
export function errorDetail(text) {
  try {
    const body = /** @type {any} */ (parse(text));
    return body?.error ?? null;
  } catch {
    return null;
  }
}

/**
 * The failure an error answer reports.
 * @param {number} status
 * @param {string} text
 */
export function rejectionOf(status, text) {
  const detail = errorDetail(text);
  return new SyncError(detail?.message ?? `HTTP ${status}`, { status, code: detail?.code ?? 'unknown' });
}

/**
 * Any error as a {@link SyncError} (a bug in the client is `client_error`).
 * @param {unknown} error
 */
export function asSyncError(error) {
  if (error instanceof SyncError) return error;
  return new SyncError(messageOf(error), { code: 'client_error' });
}

/**
 * The index in the batch of the change an `invalid_change` answer refuses: its `change` member
 * (protocol revision 2.9); -1 when the answer has a `field` but no `change` (the batch's numbering);
 * from a server before 2.9, which has neither, the message's start (`changes[3].value: …`).
 * @param {{change?: number, field?: string, message?: string}} detail
 * @returns {number}
 */
export function refusedIndex(detail) {
  if (Number.isInteger(detail.change)) return /** @type {number} */ (detail.change);
  if (typeof detail.field === 'string') return -1;
  const match = /^changes\[(\d+)\](?!\.seq)/.exec(detail.message ?? '');
  return match ? Number(match[1]) : -1;
}
