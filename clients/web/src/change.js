// Changes: the entries of every device's log, what sync pushes and pulls (protocol.md §3). A change
// here is a plain object with the wire's members; `unknown` holds members this protocol version does
// not define for the change's kind (a newer client's), kept and passed on unchanged.

import { canonicalText, compareCodePoints, isNFC, isObject, MAX_INTEGER, numberOf, object, valueViolation } from './json.js';
import { isHLC } from './hlc.js';

/** The kinds of change. */
export const KINDS = ['parameter', 'eligibility', 'display', 'donation', 'donationsDeleted', 'datastoreReset'];
/** Why a tip was invalidated. */
export const INVALIDATION_REASONS = ['actionPerformed', 'tipClosed', 'displayCountExceeded', 'displayDurationExceeded'];

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
  constructor(field, message) {
    super(`${field}: ${message}`);
    this.name = 'ChangeError';
    this.field = field;
    this.detail = message;
  }
}

/**
 * The members of each kind of change, beside `device`, `seq`, `hlc` and `kind`.
 * @type {{[kind: string]: string[]}}
 */
const FIELDS = {
  parameter: ['id', 'value'],
  eligibility: ['tip', 'state', 'reason'],
  display: ['tip', 'epoch', 'count', 'duration', 'lastDisplayed'],
  donation: ['event', 'id', 'date', 'info'],
  donationsDeleted: ['event'],
  datastoreReset: [],
};

/**
 * @param {unknown} value
 * @returns {string}
 */
function kindName(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'boolean') return 'a boolean';
  if (typeof value === 'string') return 'a string';
  return 'a number';
}

/**
 * Reads a change from its JSON (protocol.md §3), refusing what does not fit: the error names the
 * member. Does not check the protocol's rules on values (see {@link violation}).
 * @param {JSONValue} json
 * @returns {Change}
 */
export function decodeChange(json) {
  if (!isObject(json)) throw new ChangeError('', `expected an object, found ${kindName(json)}`);
  const members = /** @type {import('./json.js').JSONObject} */ (json);
  /** @param {string} name */
  const has = (name) => Object.prototype.hasOwnProperty.call(json, name);
  /**
   * @param {string} name
   * @returns {JSONValue}
   */
  const need = (name) => {
    if (!has(name)) throw new ChangeError(name, `no value for key '${name}'`);
    return members[name];
  };
  /**
   * @param {string} name
   * @returns {string}
   */
  const string = (name) => {
    const value = need(name);
    if (typeof value !== 'string') throw new ChangeError(name, `expected a string, found ${kindName(value)}`);
    return value;
  };
  /**
   * An integer; outside the number model a BigInt, which {@link violation} refuses.
   * @returns {number}
   * @param {string} name
   */
  const integer = (name) => {
    const value = need(name);
    if (typeof value === 'bigint') return /** @type {number} */ (/** @type {unknown} */ (value));
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      throw new ChangeError(name, `expected an integer, found ${typeof value === 'number' ? value : kindName(value)}`);
    }
    return value;
  };
  /**
   * @param {string} name
   * @param {unknown} [value]
   * @returns {string}
   */
  const hlc = (name, value = need(name)) => {
    if (!isHLC(value)) throw new ChangeError(name, `invalid HLC: expected 12 hex digits, '-', 4 hex digits`);
    return value;
  };
  const kind = string('kind');
  if (!KINDS.includes(kind)) {
    throw new ChangeError('kind', `unknown change kind '${kind}'; expected one of ${KINDS.join(', ')}`);
  }
  /** @type {Change} */
  const change = { device: string('device'), seq: integer('seq'), hlc: hlc('hlc'), kind, unknown: object() };
  switch (kind) {
    case 'parameter':
      change.id = string('id');
      change.value = need('value');
      break;
    case 'eligibility': {
      const state = string('state');
      if (state === 'invalidated') {
        const reason = string('reason');
        if (!INVALIDATION_REASONS.includes(reason)) {
          throw new ChangeError('reason', `unknown invalidation reason '${reason}'; expected one of ${INVALIDATION_REASONS.join(', ')}`);
        }
        change.reason = reason;
      } else if (state !== 'eligible') {
        throw new ChangeError('state', `unknown eligibility state '${state}'; expected eligible or invalidated`);
      }
      change.state = state;
      change.tip = string('tip');
      break;
    }
    case 'display': {
      change.tip = string('tip');
      change.epoch = null;
      if (has('epoch')) {
        const epoch = members.epoch;
        const keys = isObject(epoch) ? Object.keys(epoch) : [];
        if (!isObject(epoch) || keys.length !== 2 || !keys.includes('hlc') || !keys.includes('device')) {
          const found = isObject(epoch)
            ? 'an object with members ' + keys.sort().map((key) => `'${key}'`).join(', ')
            : kindName(epoch);
          throw new ChangeError('epoch', `an epoch is an object with exactly the members hlc and device, or absent; found ${found}`);
        }
        if (typeof epoch.device !== 'string') throw new ChangeError('epoch.device', `expected a string, found ${kindName(epoch.device)}`);
        change.epoch = { hlc: hlc('epoch.hlc', epoch.hlc), device: epoch.device };
      }
      change.count = integer('count');
      const duration = need('duration');
      if (numberOf(duration) === undefined) throw new ChangeError('duration', `expected a number, found ${kindName(duration)}`);
      change.duration = numberOf(duration);
      change.lastDisplayed = integer('lastDisplayed');
      break;
    }
    case 'donation':
      change.event = string('event');
      change.id = string('id');
      change.date = integer('date');
      // `"info": null` is a payload (null), kept as sent; absent is no payload.
      change.hasInfo = has('info');
      if (change.hasInfo) change.info = members.info;
      break;
    case 'donationsDeleted':
      change.event = string('event');
      break;
  }
  for (const key of Object.keys(members)) {
    if (['device', 'seq', 'hlc', 'kind'].includes(key) || FIELDS[kind].includes(key)) continue;
    change.unknown[key] = members[key];
  }
  // `reason` is a field of an invalidation only: on `eligible` it is a newer client's, kept.
  if (kind === 'eligibility' && change.state === 'eligible' && has('reason')) change.unknown.reason = members.reason;
  return change;
}

/**
 * The member naming the change's id, and that id (`null` for a datastore reset).
 * @param {Change} change
 * @returns {[string, string] | null}
 */
function namedID(change) {
  const fields = /** @type {Required<Change>} */ (change);
  switch (change.kind) {
    case 'parameter':
      return ['id', fields.id];
    case 'eligibility':
    case 'display':
      return ['tip', fields.tip];
    case 'donation':
    case 'donationsDeleted':
      return ['event', fields.event];
    default:
      return null;
  }
}

/**
 * Why `name` cannot be an account or device name (protocol.md §6: 1 to 256 bytes of UTF-8 without
 * control characters, Unicode category Cc), as a ChangeError for `field`; else null.
 * @param {string} name
 * @param {string} field
 */
function nameViolation(name, field) {
  if (name === '') return new ChangeError(field, 'a device name must not be empty');
  if (new TextEncoder().encode(name).length > 256) return new ChangeError(field, 'a device name must be at most 256 bytes of UTF-8');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return new ChangeError(field, 'a device name must not contain control characters');
  return null;
}

/**
 * The first rule of protocol.md §3 the change breaks, or `null`: sequence numbers from 1, ids not
 * empty and in NFC, numbers inside the number model, counts and times not negative, a donation's
 * id `"<device>:<seq>"`.
 * @param {Change} change
 * @returns {ChangeError | null}
 */
export function violation(change) {
  // A decoded change of a kind has that kind's members.
  const fields = /** @type {Required<Change>} */ (change);
  /**
   * @param {number | bigint} value
   * @param {string} field
   * @param {number} [low]
   */
  const outside = (value, field, low = 0) =>
    typeof value === 'bigint' || value < low || value > MAX_INTEGER
      ? new ChangeError(field, `must be an integer from ${low} to ${MAX_INTEGER}, got ${value}`)
      : null;
  const seq = change.seq;
  if (typeof seq === 'bigint' || seq < 1 || seq > MAX_INTEGER) {
    return new ChangeError('seq', `a sequence number is an integer from 1 (the device's first change) to ${MAX_INTEGER}, got ${seq}`);
  }
  const named = namedID(change);
  if (named && named[1] === '') return new ChangeError(named[0], 'ids are not empty');
  if (named && !isNFC(named[1])) {
    return new ChangeError(
      named[0],
      'ids must be in Unicode normalization form C (NFC): canonically equivalent spellings of one id would be one record on some replicas and two on others');
  }
  for (const key of Object.keys(change.unknown).sort(compareCodePoints)) {
    const found = valueViolation(change.unknown[key], key);
    if (found) return new ChangeError(found.field, found.message);
  }
  /**
   * @param {JSONValue | undefined} value
   * @param {string} path
   */
  const numbers = (value, path) => {
    const found = valueViolation(value, path);
    return found ? new ChangeError(found.field, found.message) : null;
  };
  switch (change.kind) {
    case 'parameter':
      return numbers(change.value, 'value');
    case 'display':
      return (
        // An epoch is the stamp of the eligible or datastoreReset that started it: a device name.
        (change.epoch ? nameViolation(change.epoch.device, 'epoch.device') : null) ??
        outside(fields.count, 'count') ??
        (Number.isFinite(change.duration) && /** @type {number} */ (change.duration) >= 0 && /** @type {number} */ (change.duration) <= MAX_INTEGER
          ? null
          : new ChangeError('duration', `must be a number of seconds from 0 to ${MAX_INTEGER}`)) ??
        outside(fields.lastDisplayed, 'lastDisplayed')
      );
    case 'donation':
      if (change.id !== `${change.device}:${change.seq}`) {
        return new ChangeError('id', `a donation's id is "<device>:<seq>" of its change, here "${change.device}:${change.seq}"`);
      }
      return outside(fields.date, 'date') ?? (change.hasInfo ? numbers(change.info, 'info') : null);
    default:
      return null;
  }
}

/**
 * The most UTF-8 bytes a change's canonical JSON text may have (protocol.md §3): 64 KiB. A server
 * refuses a push holding a larger change, so a writer never stores one.
 */
export const MAX_CHANGE_BYTES = 65536;

/**
 * The size rule of protocol.md §3: null when the change's canonical JSON text is at most
 * {@link MAX_CHANGE_BYTES} bytes of UTF-8, else a ChangeError of the whole change (its field empty).
 * @param {Change} change
 * @returns {ChangeError | null}
 */
export function sizeViolation(change) {
  const bytes = new TextEncoder().encode(changeText(change)).length;
  if (bytes <= MAX_CHANGE_BYTES) return null;
  const error = new ChangeError('', `its canonical JSON text is ${bytes} bytes, over the ${MAX_CHANGE_BYTES} bytes a change may have (protocol.md, section 3)`);
  error.message = error.detail;
  return error;
}

/**
 * A change as its JSON object (for pushing, storing and canonical text).
 * @param {Change} change
 * @returns {import("./json.js").JSONObject}
 */
export function encodeChange(change) {
  const json = object();
  for (const [key, value] of Object.entries(change.unknown)) json[key] = value;
  json.device = change.device;
  json.seq = change.seq;
  json.hlc = change.hlc;
  json.kind = change.kind;
  // A change of a kind has that kind's members (decodeChange and the replica's writes make them so).
  const fields = /** @type {Required<Change>} */ (change);
  switch (change.kind) {
    case 'parameter':
      json.id = fields.id;
      json.value = fields.value;
      break;
    case 'eligibility':
      json.tip = fields.tip;
      json.state = fields.state;
      if (fields.state === 'invalidated') json.reason = fields.reason;
      break;
    case 'display':
      json.tip = fields.tip;
      if (fields.epoch) json.epoch = { hlc: fields.epoch.hlc, device: fields.epoch.device };
      json.count = fields.count;
      json.duration = fields.duration;
      json.lastDisplayed = fields.lastDisplayed;
      break;
    case 'donation':
      json.event = fields.event;
      json.id = fields.id;
      json.date = fields.date;
      if (change.hasInfo) json.info = fields.info;
      break;
    case 'donationsDeleted':
      json.event = fields.event;
      break;
  }
  return json;
}

/**
 * The change's canonical JSON text (protocol.md §1): what a push carries.
 * @param {Change} change
 * @returns {string}
 */
export function changeText(change) {
  return canonicalText(encodeChange(change));
}

/**
 * The change's stamp: its HLC and device.
 * @returns {Stamp}
 * @param {Stamp} change
 */
export function stampOf(change) {
  return { hlc: change.hlc, device: change.device };
}
