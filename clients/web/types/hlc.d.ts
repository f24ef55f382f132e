/**
 * Whether `text` is an HLC's wire form.
 * @param {unknown} text
 * @returns {text is string}
 */
export function isHLC(text: unknown): text is string;
/**
 * @returns {{milliseconds: number, counter: number}}
 * @param {string} text
 */
export function parseHLC(text: string): {
    milliseconds: number;
    counter: number;
};
/**
 * The wire form of an HLC.
 * @param {number} milliseconds
 * @param {number} counter
 * @returns {string}
 */
export function formatHLC(milliseconds: number, counter: number): string;
/** @typedef {{hlc: string, device: string}} Stamp */
/**
 * Orders stamps by HLC, then device id by code points: -1, 0 or 1.
 * @param {Stamp} a
 * @param {Stamp} b
 * @returns {number}
 */
export function compareStamps(a: Stamp, b: Stamp): number;
/**
 * Display epochs: a missing epoch (null) precedes every stamp.
 * @param {Stamp | null | undefined} a
 * @param {Stamp | null | undefined} b
 * @returns {boolean}
 */
export function epochPrecedes(a: Stamp | null | undefined, b: Stamp | null | undefined): boolean;
/**
 * The later of two epochs.
 * @param {Stamp | null} a
 * @param {Stamp | null} b
 * @returns {Stamp | null}
 */
export function laterEpoch(a: Stamp | null, b: Stamp | null): Stamp | null;
/**
 * The text that identifies a stamp (as a map key).
 * @param {Stamp | null | undefined} stamp
 * @returns {string}
 */
export function stampKey(stamp: Stamp | null | undefined): string;
/** The largest physical time an HLC carries: 2^48 − 1 milliseconds. */
export const MAX_HLC_MILLISECONDS: number;
/**
 * A hybrid logical clock: `tick` stamps a local change, `observe` takes in a remote one, so every
 * stamp this device makes is later than every stamp it has seen.
 */
export class HybridLogicalClock {
    /** @param {string} last the latest HLC issued or seen */
    constructor(last?: string);
    milliseconds: number;
    counter: number;
    /** The wire form of the latest HLC. */
    get last(): string;
    /**
     * A new HLC, later than every one issued or observed.
     * @param {number} physical milliseconds since 1970
     */
    tick(physical: number): string;
    /**
     * Takes in an HLC from another device (the reference's rule, counter overflow included).
     * @param {string} hlc
     * @param {number} [physical]
     */
    observe(hlc: string, physical?: number | undefined): void;
}
export type Stamp = {
    hlc: string;
    device: string;
};
