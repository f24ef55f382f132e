/**
 * Reads a rule expression from its JSON.
 * @param {JSONValue} json
 * @returns {Rule}
 */
export function parseRule(json: JSONValue): Rule;
/**
 * A parsed rule's JSON form (13.2), as the reference writes it back: arrays and objects as
 * `{"literal": …}`, a `donatedWithin` window in seconds.
 * @param {Rule} rule
 * @returns {JSONValue}
 */
export function ruleJSON(rule: Rule): JSONValue;
/**
 * Every expression in a rule that reads the state or the device (`param`, `donations`, `context`,
 * `bucket`), outermost first.
 * @returns {Rule[]}
 * @param {Rule} rule
 * @param {Rule[]} [found]
 */
export function readsOf(rule: Rule, found?: Rule[] | undefined): Rule[];
/**
 * -1, 0 or 1 (protocol.md §13.8): each version is numbers of 1 to 9 decimal digits separated by `.`,
 * optionally followed by `-` or `+` and anything (ignored); the numbers compare in turn, a missing
 * one counting as 0. Anything else is an evaluation error.
 * @param {JSONValue} lhs
 * @param {JSONValue} rhs
 * @returns {number}
 */
export function compareVersions(lhs: JSONValue, rhs: JSONValue): number;
/**
 * The parameter and event ids a rule reads.
 * @param {Rule} rule
 * @param {{parameters: Set<string>, events: Set<string>}} [found]
 */
export function idsRead(rule: Rule, found?: {
    parameters: Set<string>;
    events: Set<string>;
} | undefined): {
    parameters: Set<string>;
    events: Set<string>;
};
/**
 * Compares JSON values: numbers by value, strings by code points, others only for equality.
 * @param {string} op
 * @param {JSONValue} lhs
 * @param {JSONValue} rhs
 * @returns {boolean}
 */
export function compareValues(op: string, lhs: JSONValue, rhs: JSONValue): boolean;
/**
 * Arithmetic: IEEE-754 binary64 on every number, integers too (protocol.md §13.4): `(2^53 − 1) + 2`
 * is 2^53, as in every client.
 * @param {string} op
 * @param {JSONValue} lhs
 * @param {JSONValue} rhs
 * @returns {number}
 */
export function arithmetic(op: string, lhs: JSONValue, rhs: JSONValue): number;
/** @typedef {import('./json.js').JSONValue} JSONValue */
/** @typedef {import('./state.js').Donation} Donation */
/**
 * A parsed rule expression.
 * @typedef {{op: string, value?: JSONValue, name?: string, operands?: Rule[], seconds?: number, field?: string}} Rule
 */
/** A rule that is not one of the language's expressions; the message says why. */
export class RuleFormatError extends Error {
}
/** A rule that could not be evaluated (a type error, for example): it does not hold. */
export class RuleEvaluationError extends Error {
}
/**
 * What rules read: parameter values, visible donations, the instant (seconds since 1970) and what
 * the device says of itself (targeting, protocol.md §13.8).
 * @typedef {{parameterValue(id: string): JSONValue, donations(event: string): Donation[], now: number, deviceContext?: import('./context.js').DeviceContext}} RuleContext
 */
/** Evaluates rules against a context. */
export class RuleEvaluator {
    /** @param {RuleContext} context */
    constructor(context: RuleContext);
    context: RuleContext;
    /**
     * Whether the rule holds; throws {@link RuleEvaluationError} when it cannot be evaluated.
     * @param {Rule} rule
     * @returns {boolean}
     */
    holds(rule: Rule): boolean;
    #private;
}
export type JSONValue = import('./json.js').JSONValue;
export type Donation = import('./state.js').Donation;
/**
 * A parsed rule expression.
 */
export type Rule = {
    op: string;
    value?: JSONValue;
    name?: string;
    operands?: Rule[];
    seconds?: number;
    field?: string;
};
/**
 * What rules read: parameter values, visible donations, the instant (seconds since 1970) and what
 * the device says of itself (targeting, protocol.md §13.8).
 */
export type RuleContext = {
    parameterValue(id: string): JSONValue;
    donations(event: string): Donation[];
    now: number;
    deviceContext?: import("./context.js").DeviceContext | undefined;
};
/**
 * A donation's field: `date` in seconds, else its payload's member (or null).
 * @param {string} name
 * @param {Donation} donation
 * @returns {JSONValue}
 */
declare function field(name: string, donation: Donation): JSONValue;
export {};
