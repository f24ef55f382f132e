// The rule language (protocol.md §13): JSON expressions over parameters, donations and the current
// instant. One evaluator, the reference's semantics: a rule that fails to evaluate does not hold.

import { canonicalText, compareCodePoints, isObject, jsonEquals, numberOf, valueViolation } from './json.js';
import { bucket } from './bucket.js';
import { contextValue } from './context.js';

/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./state.js').Donation} Donation */
/**
 * A parsed rule expression.
 * @typedef {{op: string, value?: JSONValue, name?: string, operands?: Rule[], seconds?: number, field?: string}} Rule
 */

/** A rule that is not one of the language's expressions; the message says why. */
export class RuleFormatError extends Error {}

/** A rule that could not be evaluated (a type error, for example): it does not hold. */
export class RuleEvaluationError extends Error {}

const COMPARISONS = ['==', '!=', '<', '<=', '>', '>='];
const ARITHMETIC = ['+', '-', '*', '/'];
/** @type {{[unit: string]: number}} */
const UNITS = { minute: 60, hour: 3600, day: 86_400, week: 604_800 };

/**
 * A literal's value; a number outside the protocol's number model (section 1) refuses the rule.
 * @param {JSONValue} value
 * @returns {JSONValue}
 */
function literal(value) {
  const violation = valueViolation(value, 'literal');
  if (violation) throw new RuleFormatError(`${violation.field}: ${violation.message}`);
  return value;
}

/**
 * Reads a rule expression from its JSON.
 * @param {JSONValue} json
 * @returns {Rule}
 */
export function parseRule(json) {
  if (!isObject(json)) {
    if (Array.isArray(json)) throw new RuleFormatError('a bare array is not a rule expression; wrap it in {"literal": […]}');
    return { op: 'literal', value: literal(json) };
  }
  const members = /** @type {import('./json.js').JSONObject} */ (json);
  const keys = Object.keys(members);
  if (keys.length !== 1) {
    throw new RuleFormatError(`a rule expression object must have exactly one key (the operator), got [${keys.sort().map((k) => JSON.stringify(k)).join(', ')}]`);
  }
  const op = keys[0];
  const argument = members[op];
  /**
   * @param {number} count
   * @returns {JSONValue[]}
   */
  const operands = (count) => {
    if (!Array.isArray(argument) || argument.length !== count) throw new RuleFormatError(`'${op}' takes an array of ${count} operands`);
    return argument;
  };
  /**
   * @param {JSONValue} value
   * @returns {string}
   */
  const string = (value) => {
    if (typeof value !== 'string') throw new RuleFormatError(`'${op}' needs a string`);
    return value;
  };
  if (COMPARISONS.includes(op) || ARITHMETIC.includes(op)) {
    const items = operands(2);
    return { op, operands: [parseRule(items[0]), parseRule(items[1])] };
  }
  switch (op) {
    case 'literal':
      return { op, value: literal(argument) };
    case 'param':
    case 'donations':
    case 'field':
    case 'context':
    case 'bucket':
      return { op, name: string(argument) };
    case 'compareVersions': {
      const items = operands(2);
      return { op, operands: [parseRule(items[0]), parseRule(items[1])] };
    }
    case 'now':
      if (argument !== true) throw new RuleFormatError("'now' takes true: {\"now\": true}");
      return { op };
    case 'not':
    case 'count':
      return { op, operands: [parseRule(argument)] };
    case 'and':
    case 'or':
      if (!Array.isArray(argument)) throw new RuleFormatError(`'${op}' takes an array`);
      return { op, operands: argument.map(parseRule) };
    case 'filter':
    case 'contains': {
      const items = operands(2);
      return { op, operands: [parseRule(items[0]), parseRule(items[1])] };
    }
    case 'donatedWithin': {
      const items = operands(2);
      return { op, operands: [parseRule(items[0])], seconds: windowSeconds(items[1]) };
    }
    case 'largestSubset':
    case 'smallestSubset': {
      const items = operands(2);
      return { op, operands: [parseRule(items[0])], field: string(items[1]) };
    }
    default:
      throw new RuleFormatError(`unknown rule operator '${op}'`);
  }
}

/**
 * @param {JSONValue} json
 * @returns {number}
 */
function windowSeconds(json) {
  let seconds;
  const number = numberOf(json);
  if (number !== undefined) seconds = number;
  else if (typeof json === 'string') seconds = UNITS[json];
  else if (isObject(json) && Object.keys(json).length === 1) {
    const [key] = Object.keys(json);
    const unit = key.endsWith('s') ? UNITS[key.slice(0, -1)] : undefined;
    const count = numberOf(/** @type {import("./json.js").JSONObject} */ (json)[key]);
    if (unit !== undefined && count !== undefined) seconds = unit * count;
  }
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) {
    throw new RuleFormatError(
      `donatedWithin's window is a number of seconds (0 or more), "minute", "hour", "day", "week", or one of {"minutes": n}, {"hours": n}, {"days": n}, {"weeks": n}; got ${canonicalText(json)}`);
  }
  return seconds;
}

/**
 * A parsed rule's JSON form (13.2), as the reference writes it back: arrays and objects as
 * `{"literal": …}`, a `donatedWithin` window in seconds.
 * @param {Rule} rule
 * @returns {JSONValue}
 */
export function ruleJSON(rule) {
  const operands = (rule.operands ?? []).map(ruleJSON);
  switch (rule.op) {
    case 'literal':
      return Array.isArray(rule.value) || isObject(rule.value) ? { literal: rule.value } : /** @type {JSONValue} */ (rule.value);
    case 'param':
    case 'donations':
    case 'field':
    case 'context':
    case 'bucket':
      return { [rule.op]: rule.name };
    case 'now':
      return { now: true };
    case 'not':
    case 'count':
      return { [rule.op]: operands[0] };
    case 'donatedWithin':
      return { donatedWithin: [operands[0], rule.seconds] };
    case 'largestSubset':
    case 'smallestSubset':
      return { [rule.op]: [operands[0], rule.field] };
    default:
      return { [rule.op]: operands };
  }
}

/**
 * Every expression in a rule that reads the state or the device (`param`, `donations`, `context`,
 * `bucket`), outermost first.
 * @returns {Rule[]}
 * @param {Rule} rule
 * @param {Rule[]} [found]
 */
export function readsOf(rule, found = []) {
  if (['param', 'donations', 'context', 'bucket'].includes(rule.op)) found.push(rule);
  for (const operand of rule.operands ?? []) readsOf(operand, found);
  return found;
}

/**
 * -1, 0 or 1 (protocol.md §13.8): each version is numbers of 1 to 9 decimal digits separated by `.`,
 * optionally followed by `-` or `+` and anything (ignored); the numbers compare in turn, a missing
 * one counting as 0. Anything else is an evaluation error.
 * @param {JSONValue} lhs
 * @param {JSONValue} rhs
 * @returns {number}
 */
export function compareVersions(lhs, rhs) {
  /**
   * @param {JSONValue} value
   * @returns {number[]}
   */
  const parts = (value) => {
    if (typeof value !== 'string') throw new RuleEvaluationError(`compareVersions needs version strings, got ${canonicalText(value)}`);
    const core = value.split(/[-+]/, 1)[0];
    const pieces = core.split('.');
    if (!pieces.every((piece) => /^[0-9]{1,9}$/.test(piece))) throw new RuleEvaluationError(`'${value}' is not a version (numbers separated by '.')`);
    return pieces.map(Number);
  };
  const a = parts(lhs);
  const b = parts(rhs);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * The parameter and event ids a rule reads.
 * @param {Rule} rule
 * @param {{parameters: Set<string>, events: Set<string>}} [found]
 */
export function idsRead(rule, found = { parameters: new Set(), events: new Set() }) {
  if (rule.op === 'param') found.parameters.add(/** @type {string} */ (rule.name));
  if (rule.op === 'donations') found.events.add(/** @type {string} */ (rule.name));
  for (const operand of rule.operands ?? []) idsRead(operand, found);
  return found;
}

/** A list of donations, as a value distinct from JSON arrays. */
class DonationList {
  /** @param {Donation[]} donations */
  constructor(donations) {
    this.donations = donations;
  }
}

/**
 * A donation's field: `date` in seconds, else its payload's member (or null).
 * @param {string} name
 * @param {Donation} donation
 * @returns {JSONValue}
 */
function field(name, donation) {
  if (name === 'date') return donation.date / 1000;
  const info = donation.info;
  if (isObject(info) && Object.prototype.hasOwnProperty.call(info, name)) return /** @type {import("./json.js").JSONObject} */ (info)[name];
  return null;
}

/**
 * @param {string} op
 * @param {number} a
 * @param {number} b
 * @returns {boolean}
 */
function compareNumbers(op, a, b) {
  switch (op) {
    case '==': return a === b;
    case '!=': return a !== b;
    case '<': return a < b;
    case '<=': return a <= b;
    case '>': return a > b;
    default: return a >= b;
  }
}

/**
 * Compares JSON values: numbers by value, strings by code points, others only for equality.
 * @param {string} op
 * @param {JSONValue} lhs
 * @param {JSONValue} rhs
 * @returns {boolean}
 */
export function compareValues(op, lhs, rhs) {
  const a = numberOf(lhs);
  const b = numberOf(rhs);
  if (a !== undefined && b !== undefined) return compareNumbers(op, a, b);
  let order;
  if (typeof lhs === 'string' && typeof rhs === 'string') order = compareCodePoints(lhs, rhs);
  else order = jsonEquals(lhs, rhs) ? 0 : null;
  switch (op) {
    case '==': return order === 0;
    case '!=': return order !== 0;
    case '<': return order !== null && order < 0;
    case '<=': return order !== null && order <= 0;
    case '>': return order !== null && order > 0;
    default: return order !== null && order >= 0;
  }
}

/**
 * Arithmetic: IEEE-754 binary64 on every number, integers too (protocol.md §13.4): `(2^53 − 1) + 2`
 * is 2^53, as in every client.
 * @param {string} op
 * @param {JSONValue} lhs
 * @param {JSONValue} rhs
 * @returns {number}
 */
export function arithmetic(op, lhs, rhs) {
  const a = numberOf(lhs);
  const b = numberOf(rhs);
  if (a === undefined || b === undefined) {
    throw new RuleEvaluationError(`'${op}' needs numbers, got ${canonicalText(lhs)} and ${canonicalText(rhs)}`);
  }
  const result = op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : a / b;
  if (!Number.isFinite(result)) {
    throw new RuleEvaluationError(`'${op}' of ${canonicalText(lhs)} and ${canonicalText(rhs)} is not a finite number`);
  }
  return result === 0 ? 0 : result;
}

/**
 * What rules read: parameter values, visible donations, the instant (seconds since 1970) and what
 * the device says of itself (targeting, protocol.md §13.8).
 * @typedef {{parameterValue(id: string): JSONValue, donations(event: string): Donation[], now: number, deviceContext?: import('./context.js').DeviceContext}} RuleContext
 */

/** Evaluates rules against a context. */
export class RuleEvaluator {
  /** @param {RuleContext} context */
  constructor(context) {
    this.context = context;
  }

  /**
   * Whether the rule holds; throws {@link RuleEvaluationError} when it cannot be evaluated.
   * @param {Rule} rule
   * @returns {boolean}
   */
  holds(rule) {
    return this.#truth(rule, null);
  }

  /**
   * @param {Rule} rule
   * @param {Donation | null} element
   * @returns {boolean}
   */
  #truth(rule, element) {
    const value = this.#evaluate(rule, element);
    if (typeof value !== 'boolean') throw new RuleEvaluationError(`expected a true/false result from ${rule.op}`);
    return value;
  }

  /**
   * @returns {Donation[]}
   * @param {Rule} rule
   * @param {Donation | null} element
   */
  #list(rule, element) {
    const value = this.#evaluate(rule, element);
    if (!(value instanceof DonationList)) throw new RuleEvaluationError(`expected a donation list from ${rule.op}`);
    return value.donations;
  }

  /**
   * @param {Rule} rule
   * @param {Donation | null} element
   * @returns {JSONValue}
   */
  #json(rule, element) {
    const value = this.#evaluate(rule, element);
    if (value instanceof DonationList) throw new RuleEvaluationError(`expected a value, got a donation list from ${rule.op}`);
    return value;
  }

  /**
   * @param {Rule} parsed
   * @param {Donation | null} element
   * @returns {JSONValue | DonationList}
   */
  #evaluate(parsed, element) {
    // A parsed rule has its operator's members (parseRule makes it so).
    const rule = /** @type {Required<Rule>} */ (parsed);
    const [a, b] = rule.operands ?? [];
    switch (rule.op) {
      case 'literal':
        return rule.value;
      case 'param':
        return this.context.parameterValue(rule.name);
      case 'donations':
        return new DonationList(this.context.donations(rule.name));
      case 'field':
        if (!element) throw new RuleEvaluationError(`field '${rule.name}' used outside filter/contains`);
        return field(rule.name, element);
      case 'now':
        return this.context.now;
      case 'not':
        return !this.#truth(a, element);
      case 'and':
        for (const part of rule.operands) if (!this.#truth(part, element)) return false;
        return true;
      case 'or':
        for (const part of rule.operands) if (this.#truth(part, element)) return true;
        return false;
      case 'count':
        return this.#list(a, element).length;
      case 'filter':
        return new DonationList(this.#list(a, element).filter((donation) => this.#truth(b, donation)));
      case 'contains':
        for (const donation of this.#list(a, element)) if (this.#truth(b, donation)) return true;
        return false;
      case 'donatedWithin': {
        const threshold = Math.ceil((this.context.now - rule.seconds) * 1000);
        return new DonationList(this.#list(a, element).filter((donation) => donation.date >= threshold));
      }
      case 'largestSubset':
      case 'smallestSubset':
        return new DonationList(subset(this.#list(a, element), rule.field, rule.op === 'largestSubset'));
      case 'context':
        return contextValue(this.context.deviceContext ?? {}, rule.name);
      case 'bucket': {
        const account = this.context.deviceContext?.account;
        if (typeof account !== 'string') throw new RuleEvaluationError(`bucket '${rule.name}': this device does not know its account yet`);
        return bucket(account, rule.name);
      }
      case 'compareVersions':
        return compareVersions(this.#json(a, element), this.#json(b, element));
      default:
        if (COMPARISONS.includes(rule.op)) return compareValues(rule.op, this.#json(a, element), this.#json(b, element));
        return arithmetic(rule.op, this.#json(a, element), this.#json(b, element));
    }
  }
}

/**
 * Groups donations by a field's value and picks the largest (or smallest) group; ties go to the
 * value whose canonical JSON text sorts first by UTF-8 bytes, so every replica picks the same one.
 * @param {Donation[]} donations
 * @param {string} name
 * @param {boolean} largest
 * @returns {Donation[]}
 */
function subset(donations, name, largest) {
  /** @type {Map<string, Donation[]>} */
  const groups = new Map();
  for (const donation of donations) {
    const key = canonicalText(field(name, donation));
    const group = groups.get(key);
    if (group) group.push(donation);
    else groups.set(key, [donation]);
  }
  /** @type {[string, Donation[]] | null} */
  let best = null;
  for (const [key, group] of groups) {
    if (
      best === null ||
      (group.length !== best[1].length
        ? largest ? group.length > best[1].length : group.length < best[1].length
        : compareCodePoints(key, best[0]) < 0)
    ) {
      best = [key, group];
    }
  }
  return best ? best[1] : [];
}
