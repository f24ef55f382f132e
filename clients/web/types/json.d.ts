/** @returns {{[name: string]: JSONValue}} */
export function object(): {
    [name: string]: JSONValue;
};
/**
 * Whether a value is a JSON object (not an array, not null).
 * @param {unknown} value
 * @returns {value is JSONObject}
 */
export function isObject(value: unknown): value is JSONObject;
/**
 * The value as a JavaScript number, when it is a number (a BigInt is converted, rounding).
 * @param {unknown} value
 * @returns {number | undefined}
 */
export function numberOf(value: unknown): number | undefined;
/**
 * Parses JSON text strictly (RFC 8259). Integers outside ±(2^53 − 1) become BigInts; `-0` is 0.
 * @param {string} text
 * @returns {JSONValue}
 */
export function parse(text: string): JSONValue;
/**
 * Compares two strings by Unicode code points (the order of their UTF-8 bytes): -1, 0 or 1.
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function compareCodePoints(a: string, b: string): number;
/**
 * Whether a string is in Unicode normalization form C.
 * @param {string} text
 * @returns {boolean}
 */
export function isNFC(text: string): boolean;
/**
 * Equality of JSON values: numbers by value, strings by code points, objects by members.
 * @param {JSONValue | undefined} a
 * @param {JSONValue | undefined} b
 * @returns {boolean}
 */
export function jsonEquals(a: JSONValue | undefined, b: JSONValue | undefined): boolean;
/**
 * A finite number as canonical JSON writes it: integral values within the number model as integers
 * (`-0` as `0`), others as ECMAScript's shortest form (`1e-7`, `0.1`, `1.5e+300`).
 * @param {number | bigint} number
 * @returns {string}
 */
export function numberText(number: number | bigint): string;
/**
 * Canonical JSON text (protocol.md §1): keys sorted by UTF-8 bytes, no white space.
 * @param {JSONValue} value
 * @returns {string}
 */
export function canonicalText(value: JSONValue): string;
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
export function valueViolation(value: unknown, path: string): {
    field: string;
    message: string;
} | null;
/**
 * The first number in `value` outside the number model, as a violation naming its path; else null.
 * @returns {{field: string, message: string} | null}
 * @param {unknown} value
 * @param {string} path
 */
export function numberViolation(value: unknown, path: string): {
    field: string;
    message: string;
} | null;
/**
 * A JSON value: null, a boolean, a number (a BigInt for an integer outside the number model), a
 * string, an array of JSON values, or an object of JSON values (without a prototype).
 * @typedef {null | boolean | number | bigint | string | JSONArray | JSONObject} JSONValue
 */
/** @typedef {Array<any>} JSONArray JSON values. */
/** @typedef {{[name: string]: any}} JSONObject members that are JSON values. */
/** The largest integer the number model admits: 2^53 − 1. */
export const MAX_INTEGER: 9007199254740991;
/** A JSON text that is malformed, or holds an object with two equal (or canonically equivalent) member names. */
export class JSONError extends Error {
    /**
     * @param {string} message
     * @param {string} path where the problem is, in protocol terms (`changes[0].value`)
     * @param {boolean} duplicateMemberName
     */
    constructor(message: string, path?: string, duplicateMemberName?: boolean);
    path: string;
    duplicateMemberName: boolean;
}
/**
 * A JSON value: null, a boolean, a number (a BigInt for an integer outside the number model), a
 * string, an array of JSON values, or an object of JSON values (without a prototype).
 */
export type JSONValue = null | boolean | number | bigint | string | any[] | JSONObject;
/**
 * JSON values.
 */
export type JSONArray = Array<any>;
/**
 * members that are JSON values.
 */
export type JSONObject = {
    [name: string]: any;
};
