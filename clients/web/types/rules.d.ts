/**
 * Reads a rule expression from its JSON.
 * @param {JSONValue} json
 * @returns {Rule}
 */
export function parseRule(json: JSONValue): Rule;
/** The parameter and event ids a rule reads. */
export function idsRead(rule: any, found?: {
    parameters: Set<any>;
    events: Set<any>;
}): {
    parameters: Set<any>;
    events: Set<any>;
};
/** Compares JSON values: numbers by value, strings by code points, others only for equality. */
export function compareValues(op: any, lhs: any, rhs: any): boolean;
/** Arithmetic: integers exactly (64-bit, as the reference), else finite floating point. */
export function arithmetic(op: any, lhs: any, rhs: any): number | bigint;
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
 * What rules read: parameter values, visible donations, the instant (seconds since 1970).
 * @typedef {{parameterValue(id: string): JSONValue, donations(event: string): Donation[], now: number}} RuleContext
 */
/** Evaluates rules against a context. */
export class RuleEvaluator {
    /** @param {RuleContext} context */
    constructor(context: RuleContext);
    context: RuleContext;
    /** Whether the rule holds; throws {@link RuleEvaluationError} when it cannot be evaluated. */
    holds(rule: any): any;
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
 * What rules read: parameter values, visible donations, the instant (seconds since 1970).
 */
export type RuleContext = {
    parameterValue(id: string): JSONValue;
    donations(event: string): Donation[];
    now: number;
};
/** A donation's field: `date` in seconds, else its payload's member (or null). */
declare function field(name: any, donation: any): any;
export {};
