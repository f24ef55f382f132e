/**
 * A server answer's JSON, read with the number model (no integer silently rounded).
 * @param {string} text
 * @returns {any}
 */
export function parseBody(text: string): any;
/**
 * `body()`, or undefined when it throws.
 * @template T
 * @param {() => T} body
 * @returns {T | undefined}
 */
export function errorless<T>(body: () => T): T | undefined;
/**
 * The `error` object of an error answer's JSON, or null.
 * @param {string} text
 */
export function errorDetail(text: string): any;
/**
 * The failure an error answer reports.
 * @param {number} status
 * @param {string} text
 */
export function rejectionOf(status: number, text: string): SyncError;
/**
 * Any error as a {@link SyncError} (a bug in the client is `client_error`).
 * @param {unknown} error
 */
export function asSyncError(error: unknown): SyncError;
/**
 * The index in the batch of the change an `invalid_change` answer refuses: its `change` member
 * (protocol revision 2.9); -1 when the answer has a `field` but no `change` (the batch's numbering);
 * from a server before 2.9, which has neither, the message's start (`changes[3].value: …`).
 * @param {{change?: number, field?: string, message?: string}} detail
 * @returns {number}
 */
export function refusedIndex(detail: {
    change?: number;
    field?: string;
    message?: string;
}): number;
/**
 * A failure of sync. {@link SyncClient.run} retries every one with backoff except those that
 * `endsSync` (an erased account); `transient` is their opposite, kept for callers that read it.
 */
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
    /** The answer can never change: {@link SyncClient.run} ends. */
    endsSync: boolean;
    transient: boolean;
    /** The server answered with a refusal (as opposed to no answer at all). */
    get isRefusal(): boolean;
}
