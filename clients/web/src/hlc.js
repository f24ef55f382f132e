// Hybrid logical clocks and stamps (protocol.md §2). An HLC travels as "MMMMMMMMMMMM-CCCC": 12
// lowercase hex digits of milliseconds since 1970, a dash, 4 hex digits of counter; string order
// is time order. A stamp is an HLC with the device that made it; ties go to the device id by code points.

import { compareCodePoints } from './json.js';

/** The largest physical time an HLC carries: 2^48 − 1 milliseconds. */
export const MAX_HLC_MILLISECONDS = 2 ** 48 - 1;

const HLC_PATTERN = /^[0-9a-f]{12}-[0-9a-f]{4}$/;

/**
 * Whether `text` is an HLC's wire form.
 * @param {unknown} text
 * @returns {text is string}
 */
export function isHLC(text) {
  return typeof text === 'string' && HLC_PATTERN.test(text);
}

/**
 * @returns {{milliseconds: number, counter: number}}
 * @param {string} text
 */
export function parseHLC(text) {
  return { milliseconds: parseInt(text.slice(0, 12), 16), counter: parseInt(text.slice(13), 16) };
}

/**
 * The wire form of an HLC.
 * @param {number} milliseconds
 * @param {number} counter
 * @returns {string}
 */
export function formatHLC(milliseconds, counter) {
  return milliseconds.toString(16).padStart(12, '0') + '-' + counter.toString(16).padStart(4, '0');
}

/** @typedef {{hlc: string, device: string}} Stamp */

/**
 * Orders stamps by HLC, then device id by code points: -1, 0 or 1.
 * @param {Stamp} a
 * @param {Stamp} b
 * @returns {number}
 */
export function compareStamps(a, b) {
  if (a.hlc !== b.hlc) return a.hlc < b.hlc ? -1 : 1;
  return compareCodePoints(a.device, b.device);
}

/**
 * Display epochs: a missing epoch (null) precedes every stamp.
 * @param {Stamp | null | undefined} a
 * @param {Stamp | null | undefined} b
 * @returns {boolean}
 */
export function epochPrecedes(a, b) {
  if (!a) return !!b;
  if (!b) return false;
  return compareStamps(a, b) < 0;
}

/**
 * The later of two epochs.
 * @param {Stamp | null} a
 * @param {Stamp | null} b
 * @returns {Stamp | null}
 */
export function laterEpoch(a, b) {
  return epochPrecedes(a, b) ? b : a;
}

/**
 * The text that identifies a stamp (as a map key).
 * @param {Stamp | null | undefined} stamp
 * @returns {string}
 */
export function stampKey(stamp) {
  return stamp ? `${stamp.hlc}@${stamp.device}` : '';
}

/**
 * A hybrid logical clock: `tick` stamps a local change, `observe` takes in a remote one, so every
 * stamp this device makes is later than every stamp it has seen.
 */
export class HybridLogicalClock {
  /** @param {string} last the latest HLC issued or seen */
  constructor(last = formatHLC(0, 0)) {
    const { milliseconds, counter } = parseHLC(last);
    this.milliseconds = milliseconds;
    this.counter = counter;
  }

  /** The wire form of the latest HLC. */
  get last() {
    return formatHLC(this.milliseconds, this.counter);
  }

  /**
   * A new HLC, later than every one issued or observed.
   * @param {number} physical milliseconds since 1970
   */
  tick(physical) {
    const now = Math.min(Math.max(0, Math.floor(physical)), MAX_HLC_MILLISECONDS);
    if (now > this.milliseconds) {
      this.milliseconds = now;
      this.counter = 0;
    } else if (this.counter === 0xffff) {
      // At the end of time (2^48 − 1 ms) the clock stays put.
      if (this.milliseconds < MAX_HLC_MILLISECONDS) {
        this.milliseconds += 1;
        this.counter = 0;
      }
    } else {
      this.counter += 1;
    }
    return this.last;
  }

  /**
   * Takes in an HLC from another device (the reference's rule, counter overflow included).
   * @param {string} hlc
   * @param {number} [physical]
   */
  observe(hlc, physical = 0) {
    const remote = parseHLC(hlc);
    const now = Math.min(Math.max(0, Math.floor(physical)), MAX_HLC_MILLISECONDS);
    const top = Math.max(this.milliseconds, remote.milliseconds, now);
    let counter;
    if (top === this.milliseconds && top === remote.milliseconds) counter = Math.max(this.counter, remote.counter) + 1;
    else if (top === this.milliseconds) counter = this.counter + 1;
    else if (top === remote.milliseconds) counter = remote.counter + 1;
    else counter = 0;
    if (counter <= 0xffff) {
      this.milliseconds = top;
      this.counter = counter;
    } else if (top < MAX_HLC_MILLISECONDS) {
      this.milliseconds = top + 1;
      this.counter = 0;
    } else {
      this.milliseconds = top;
      this.counter = 0xffff;
    }
  }
}
