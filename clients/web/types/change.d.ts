/**
 * Reads a change from its JSON (protocol.md §3), refusing what does not fit: the error names the
 * member. Does not check the protocol's rules on values (see {@link violation}).
 * @param {JSONValue} json
 * @returns {Change}
 */
export function decodeChange(json: JSONValue): Change;
/**
 * The first rule of protocol.md §3 the change breaks, or `null`: sequence numbers from 1, ids not
 * empty and in NFC, numbers inside the number model, counts and times not negative, a donation's
 * id `"<device>:<seq>"`.
 * @param {Change} change
 * @returns {ChangeError | null}
 */
export function violation(change: Change): ChangeError | null;
/**
 * The size rule of protocol.md §3: null when the change's canonical JSON text is at most
 * {@link MAX_CHANGE_BYTES} bytes of UTF-8, else a ChangeError of the whole change (its field empty).
 * @param {Change} change
 * @returns {ChangeError | null}
 */
export function sizeViolation(change: Change): ChangeError | null;
/**
 * A change as its JSON object (for pushing, storing and canonical text).
 * @param {Change} change
 * @returns {import("./json.js").JSONObject}
 */
export function encodeChange(change: Change): import("./json.js").JSONObject;
/**
 * The change's canonical JSON text (protocol.md §1): what a push carries.
 * @param {Change} change
 * @returns {string}
 */
export function changeText(change: Change): string;
/**
 * The change's stamp: its HLC and device.
 * @returns {Stamp}
 * @param {Stamp} change
 */
export function stampOf(change: Stamp): Stamp;
/** The kinds of change. */
export const KINDS: string[];
/** Why a tip was invalidated. */
export const INVALIDATION_REASONS: string[];
/**
 * @typedef {import('./hlc.js').Stamp} Stamp
 * @typedef {import('./json.js').JSONValue} JSONValue
 * @typedef {{
 *   device: string, seq: number, hlc: string, kind: string,
 *   id?: string, value?: JSONValue, tip?: string, state?: 'eligible' | 'invalidated', reason?: string,
 *   epoch?: Stamp | null, count?: number, duration?: number, lastDisplayed?: number,
 *   event?: string, date?: number, info?: JSONValue, hasInfo?: boolean,
 *   unknown: {[name: string]: JSONValue}
 * }} Change
 */
/** A change that cannot be read, or breaks a rule of the protocol; `field` names the member. */
export class ChangeError extends Error {
    /**
     * @param {string} field
     * @param {string} message
     */
    constructor(field: string, message: string);
    field: string;
    detail: string;
}
/**
 * The most UTF-8 bytes a change's canonical JSON text may have (protocol.md §3): 64 KiB. A server
 * refuses a push holding a larger change, so a writer never stores one.
 */
export const MAX_CHANGE_BYTES: 65536;
export type Stamp = import('./hlc.js').Stamp;
export type JSONValue = import('./json.js').JSONValue;
export type Change = {
    device: string;
    seq: number;
    hlc: string;
    kind: string;
    id?: string | undefined;
    value?: import("./json.js").JSONValue | undefined;
    tip?: string | undefined;
    state?: "eligible" | "invalidated" | undefined;
    reason?: string | undefined;
    epoch?: import("./hlc.js").Stamp | null | undefined;
    count?: number | undefined;
    duration?: number | undefined;
    lastDisplayed?: number | undefined;
    event?: string | undefined;
    date?: number | undefined;
    info?: import("./json.js").JSONValue | undefined;
    hasInfo?: boolean | undefined;
    unknown: {
        [name: string]: import("./json.js").JSONValue;
    };
};
