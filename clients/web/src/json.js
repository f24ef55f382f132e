// JSON as protocol.md §1 defines it: the number model (integers within ±(2^53 − 1), finite numbers),
// member names distinct by code points and not canonically equivalent, strings compared by code
// point, and canonical text (keys sorted by UTF-8 bytes, ECMAScript number form, JSON.stringify escapes).
//
// A JSON value here is null, a boolean, a number, a string, an array, or a plain object without a
// prototype (so "__proto__" is an ordinary member name). An integer literal outside the safe range
// parses to a BigInt, so that validation can refuse it naming its digits instead of rounding it as
// JSON.parse would; arithmetic over integers (rules) may also produce a BigInt.

/**
 * A JSON value: null, a boolean, a number (a BigInt for an integer outside the number model), a
 * string, an array of JSON values, or an object of JSON values (without a prototype).
 * @typedef {null | boolean | number | bigint | string | JSONArray | JSONObject} JSONValue
 */
/** @typedef {Array<any>} JSONArray JSON values. */
/** @typedef {{[name: string]: any}} JSONObject members that are JSON values. */

/** The largest integer the number model admits: 2^53 − 1. */
export const MAX_INTEGER = 9007199254740991;

/** A JSON text that is malformed, or holds an object with two equal (or canonically equivalent) member names. */
export class JSONError extends Error {
  /**
   * @param {string} message
   * @param {string} path where the problem is, in protocol terms (`changes[0].value`)
   * @param {boolean} duplicateMemberName
   */
  constructor(message, path = '', duplicateMemberName = false) {
    super(duplicateMemberName ? `${path || 'the top-level object'}: ${message}` : message);
    this.name = 'JSONError';
    this.path = path;
    this.duplicateMemberName = duplicateMemberName;
  }
}

/** @returns {{[name: string]: JSONValue}} */
export function object() {
  return Object.create(null);
}

/**
 * Whether a value is a JSON object (not an array, not null).
 * @param {unknown} value
 * @returns {value is JSONObject}
 */
export function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The value as a JavaScript number, when it is a number (a BigInt is converted, rounding).
 * @param {unknown} value
 * @returns {number | undefined}
 */
export function numberOf(value) {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  return undefined;
}

/**
 * Parses JSON text strictly (RFC 8259). Integers outside ±(2^53 − 1) become BigInts; `-0` is 0.
 * @param {string} text
 * @returns {JSONValue}
 */
export function parse(text) {
  let index = 0;
  /** @param {string} message @returns {never} */
  const fail = (message) => {
    throw new JSONError(`malformed JSON at offset ${index}: ${message}`);
  };
  const whitespace = () => {
    while (index < text.length) {
      const c = text.charCodeAt(index);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) index++;
      else break;
    }
  };
  /**
   * @param {number} depth
   * @returns {JSONValue}
   */
  const value = (depth) => {
    if (depth > 512) fail('nested too deeply');
    whitespace();
    const c = text[index];
    if (c === '{') return parseObject(depth);
    if (c === '[') return parseArray(depth);
    if (c === '"') return parseString();
    if (c === '-' || (c >= '0' && c <= '9')) return parseNumber();
    /** @type {Array<[string, JSONValue]>} */
    const literals = [['true', true], ['false', false], ['null', null]];
    for (const [literal, result] of literals) {
      if (text.startsWith(literal, index)) {
        index += literal.length;
        return result;
      }
    }
    return fail(c === undefined ? 'unexpected end' : `unexpected '${c}'`);
  };
  /** @param {number} depth @returns {JSONValue} */
  const parseObject = (depth) => {
    index++;
    const result = object();
    /** @type {Map<string, string>} NFC form → name as sent */
    const seen = new Map();
    whitespace();
    if (text[index] === '}') {
      index++;
      return result;
    }
    for (;;) {
      whitespace();
      if (text[index] !== '"') fail('expected a member name');
      const name = parseString();
      whitespace();
      if (text[index] !== ':') fail("expected ':'");
      index++;
      let member;
      try {
        member = value(depth + 1);
      } catch (error) {
        throw withComponent(error, name);
      }
      const normalized = name.normalize('NFC');
      const earlier = seen.get(normalized);
      if (earlier !== undefined) {
        throw new JSONError(
          earlier === name
            ? `two members are named '${name}'`
            : `the member names '${earlier}' and '${name}' are canonically equivalent`,
          '', true);
      }
      seen.set(normalized, name);
      result[name] = member;
      whitespace();
      if (text[index] === ',') {
        index++;
        continue;
      }
      if (text[index] === '}') {
        index++;
        return result;
      }
      fail("expected ',' or '}'");
    }
  };
  /** @param {number} depth @returns {JSONValue} */
  const parseArray = (depth) => {
    index++;
    /** @type {JSONValue[]} */
    const result = [];
    whitespace();
    if (text[index] === ']') {
      index++;
      return result;
    }
    for (;;) {
      try {
        result.push(value(depth + 1));
      } catch (error) {
        throw withComponent(error, result.length);
      }
      whitespace();
      if (text[index] === ',') {
        index++;
        continue;
      }
      if (text[index] === ']') {
        index++;
        return result;
      }
      fail("expected ',' or ']'");
    }
  };
  const parseString = () => {
    index++;
    let result = '';
    let start = index;
    for (;;) {
      if (index >= text.length) fail('unterminated string');
      const c = text.charCodeAt(index);
      if (c === 0x22) {
        result += text.slice(start, index);
        index++;
        return result;
      }
      if (c < 0x20) fail('control character in a string');
      if (c !== 0x5c) {
        index++;
        continue;
      }
      result += text.slice(start, index);
      const escape = text[index + 1];
      const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }[escape];
      if (simple !== undefined) {
        result += simple;
        index += 2;
      } else if (escape === 'u') {
        const hex = text.slice(index + 2, index + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('bad \\u escape');
        result += String.fromCharCode(parseInt(hex, 16));
        index += 6;
      } else {
        fail('bad escape');
      }
      start = index;
    }
  };
  const parseNumber = () => {
    const match = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(index, index + 400));
    if (!match) return fail('bad number');
    // The nearest binary64 value (protocol.md §1): below the smallest it is 0; beyond the largest
    // finite one there is none, and the text cannot be read, as in every client.
    const number = Number(match[0]);
    if (!Number.isFinite(number)) fail('number out of range');
    index += match[0].length;
    if (match[2] === undefined && match[3] === undefined) {
      const integer = BigInt(match[0]);
      if (integer >= -BigInt(MAX_INTEGER) && integer <= BigInt(MAX_INTEGER)) return Number(integer);
      return integer;
    }
    return number === 0 ? 0 : number;
  };
  const result = value(0);
  whitespace();
  if (index !== text.length) fail('unexpected text after the value');
  return result;
}

/**
 * Adds a path component to a duplicate-member error as it leaves an enclosing value.
 * @param {unknown} error
 * @param {string | number} component
 */
function withComponent(error, component) {
  if (!(error instanceof JSONError) || !error.duplicateMemberName) return error;
  const inner = error.path;
  const path =
    typeof component === 'number'
      ? `[${component}]${inner && !inner.startsWith('[') ? '.' + inner : inner}`
      : `${component}${inner ? (inner.startsWith('[') ? inner : '.' + inner) : ''}`;
  const message = error.message.slice(error.message.indexOf(': ') + 2);
  return new JSONError(message, path, true);
}

/**
 * Compares two strings by Unicode code points (the order of their UTF-8 bytes): -1, 0 or 1.
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function compareCodePoints(a, b) {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (a code point above U+FFFF) sorts after every other UTF-16 unit's code point.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/**
 * Whether a string is in Unicode normalization form C.
 * @param {string} text
 * @returns {boolean}
 */
export function isNFC(text) {
  return text.normalize('NFC') === text;
}

/**
 * Equality of JSON values: numbers by value, strings by code points, objects by members.
 * @param {JSONValue | undefined} a
 * @param {JSONValue | undefined} b
 * @returns {boolean}
 */
export function jsonEquals(a, b) {
  const x = numberOf(a);
  const y = numberOf(b);
  if (x !== undefined || y !== undefined) {
    if (typeof a === 'bigint' && typeof b === 'bigint') return a === b;
    if (typeof a === 'bigint' || typeof b === 'bigint') {
      const [big, other] = typeof a === 'bigint' ? [a, b] : [b, a];
      return Number.isInteger(other) && big === BigInt(/** @type {number} */ (other));
    }
    return x === y;
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const items = /** @type {JSONValue[]} */ (b);
    return a.length === items.length && a.every((item, i) => jsonEquals(item, items[i]));
  }
  const x1 = /** @type {JSONObject} */ (a);
  const y1 = /** @type {JSONObject} */ (b);
  const keys = Object.keys(x1);
  if (keys.length !== Object.keys(y1).length) return false;
  return keys.every((key) => Object.prototype.hasOwnProperty.call(y1, key) && jsonEquals(x1[key], y1[key]));
}

/**
 * A finite number as canonical JSON writes it: integral values within the number model as integers
 * (`-0` as `0`), others as ECMAScript's shortest form (`1e-7`, `0.1`, `1.5e+300`).
 * @param {number | bigint} number
 * @returns {string}
 */
export function numberText(number) {
  if (typeof number === 'bigint') return number.toString();
  if (!Number.isFinite(number)) return 'null';
  if (Number.isInteger(number) && Math.abs(number) <= MAX_INTEGER) return number === 0 ? '0' : String(number);
  return String(number);
}

/**
 * Canonical JSON text (protocol.md §1): keys sorted by UTF-8 bytes, no white space.
 * @param {JSONValue} value
 * @returns {string}
 */
export function canonicalText(value) {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
    case 'bigint':
      return numberText(value);
    case 'string':
      return JSON.stringify(value);
    default:
      if (Array.isArray(value)) return '[' + value.map(canonicalText).join(',') + ']';
      return (
        '{' +
        Object.keys(value)
          .sort(compareCodePoints)
          .map((key) => JSON.stringify(key) + ':' + canonicalText(value[key]))
          .join(',') +
        '}'
      );
  }
}

/**
 * The first thing in a value built in code that the protocol's JSON model refuses (protocol.md §1),
 * as a violation naming its path; else null: a number outside the number model, member names that
 * are equal once normalized to NFC (canonically equivalent), or something that is not JSON at all
 * (`undefined`, a function, a Map…). A change is checked with it when it is written, so that the
 * server never refuses it (a refused change could hold up the ones behind it).
 * @returns {{field: string, message: string} | null}
 * @param {unknown} value
 * @param {string} path
 */
export function valueViolation(value, path) {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return null;
  if (typeof value === 'number' || typeof value === 'bigint') return numberViolation(value, path);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = valueViolation(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  const prototype = isObject(value) ? Object.getPrototypeOf(value) : undefined;
  if (prototype === null || prototype === Object.prototype) {
    /** @type {Map<string, string>} */
    const seen = new Map();
    const members = /** @type {{[name: string]: unknown}} */ (value);
    for (const key of Object.keys(members).sort(compareCodePoints)) {
      const normalized = key.normalize('NFC');
      const earlier = seen.get(normalized);
      if (earlier !== undefined) {
        return {
          field: path,
          message: `member names ${JSON.stringify(earlier)} and ${JSON.stringify(key)} are canonically equivalent (one name once normalized to NFC); an object may hold only one of them`,
        };
      }
      seen.set(normalized, key);
      const found = valueViolation(members[key], `${path}.${key}`);
      if (found) return found;
    }
    return null;
  }
  return { field: path, message: `${value instanceof Object ? value.constructor?.name ?? 'object' : typeof value} is not a JSON value` };
}

/**
 * The first number in `value` outside the number model, as a violation naming its path; else null.
 * @returns {{field: string, message: string} | null}
 * @param {unknown} value
 * @param {string} path
 */
export function numberViolation(value, path) {
  if (typeof value === 'bigint') {
    return { field: path, message: `integers must lie within ±${MAX_INTEGER} (2^53 − 1), got ${value}` };
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { field: path, message: 'numbers must be finite' };
    if (Number.isInteger(value) && Math.abs(value) > MAX_INTEGER) {
      return {
        field: path,
        message: `integral numbers must lie within ±${MAX_INTEGER} (2^53 − 1); send it as a string to keep it exact`,
      };
    }
    return null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const violation = numberViolation(value[i], `${path}[${i}]`);
      if (violation) return violation;
    }
    return null;
  }
  if (isObject(value)) {
    const members = /** @type {{[name: string]: unknown}} */ (value);
    for (const key of Object.keys(members).sort(compareCodePoints)) {
      const violation = numberViolation(members[key], `${path}.${key}`);
      if (violation) return violation;
    }
  }
  return null;
}
