/** @typedef {import('./sync.js').SyncClient} SyncClient */
/**
 * The clock correction an answer calls for, or null (protocol.md §11): the server's time less the
 * midpoint of the request's round trip on the device's physical clock.
 * @param {SyncClient} client
 * @param {number} serverTime
 * @param {number} sent
 */
export function clockCorrection(client: SyncClient, serverTime: number, sent: number, force?: boolean): number | null;
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
    sent: number;
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
/**
 * The platform's `CompressionStream` (browsers, Node 18+), or undefined where there is none. Read
 * through this name because the TypeScript `lib` the types are checked with does not declare it.
 * @type {(new (format: string) => TransformStream<Uint8Array, Uint8Array>) | undefined}
 */
export const compressionStream: (new (format: string) => TransformStream<Uint8Array, Uint8Array>) | undefined;
export type SyncClient = import('./sync.js').SyncClient;
