/** Whether `text` is an HLC's wire form. */
export function isHLC(text: any): boolean;
/** @returns {{milliseconds: number, counter: number}} */
export function parseHLC(text: any): {
    milliseconds: number;
    counter: number;
};
/** The wire form of an HLC. */
export function formatHLC(milliseconds: any, counter: any): string;
/** @typedef {{hlc: string, device: string}} Stamp */
/** Orders stamps by HLC, then device id by code points: -1, 0 or 1. */
export function compareStamps(a: any, b: any): 0 | 1 | -1;
/** Display epochs: a missing epoch (null) precedes every stamp. */
export function epochPrecedes(a: any, b: any): boolean;
/** The later of two epochs. */
export function laterEpoch(a: any, b: any): any;
/** The text that identifies a stamp (as a map key). */
export function stampKey(stamp: any): string;
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
    /** A new HLC, later than every one issued or observed. @param {number} physical milliseconds since 1970 */
    tick(physical: any): string;
    /** Takes in an HLC from another device (the reference's rule, counter overflow included). */
    observe(hlc: any, physical?: number): void;
}
export type Stamp = {
    hlc: string;
    device: string;
};
