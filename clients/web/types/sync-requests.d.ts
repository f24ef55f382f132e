/** @typedef {import('./sync.js').SyncClient} SyncClient */
/**
 * The clock correction an answer calls for, or null (protocol.md §11): the server's time less the
 * midpoint of the request's round trip on the device's physical clock.
 * @param {SyncClient} client
 */
export function clockCorrection(client: SyncClient, serverTime: any, sent: any, force?: boolean): number | null;
/**
 * @param {SyncClient} client
 * @param {string} method
 * @param {string} path
 * @param {{body?: string, signal?: AbortSignal, headers?: {[name: string]: string}}} options
 */
export function timed(client: SyncClient, method: string, path: string, options: {
    body?: string | undefined;
    signal?: AbortSignal | undefined;
    headers?: {
        [name: string]: string;
    } | undefined;
}): Promise<{
    response: Response;
    sent: any;
}>;
/**
 * Sends a request with the bearer token, retrying after `429` (Retry-After) and `token_expired`.
 * @param {SyncClient} client
 * @param {string} method
 * @param {string} path
 * @param {{body?: string, signal?: AbortSignal, headers?: {[name: string]: string}, stream?: boolean}} options
 * @returns {Promise<Response>}
 */
export function send(client: SyncClient, method: string, path: string, { body, signal, headers, stream }?: {
    body?: string | undefined;
    signal?: AbortSignal | undefined;
    headers?: {
        [name: string]: string;
    } | undefined;
    stream?: boolean | undefined;
}): Promise<Response>;
/** @param {SyncClient} client */
export function currentToken(client: SyncClient): Promise<string>;
export type SyncClient = import('./sync.js').SyncClient;
