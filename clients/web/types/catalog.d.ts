/**
 * Reads and validates a catalog from its JSON text or parsed JSON.
 * @param {string | JSONValue} input
 * @returns {Catalog}
 */
export function parseCatalog(input: string | JSONValue): Catalog;
/**
 * Each event's donation limit, by event id.
 * @returns {{[event: string]: DonationLimit}}
 * @param {Catalog} catalog
 */
export function donationLimits(catalog: Catalog): {
    [event: string]: import("./state.js").DonationLimit;
};
/**
 * The catalog a device of `platform` applies (protocol.md §13.11): the tips for it or for every
 * platform, groups without the others, and the platform's settings over the catalog's. A device that
 * does not know its platform gets only the tips for every platform.
 * @param {Catalog} catalog
 * @param {string | null | undefined} platform
 * @returns {Catalog}
 */
export function forPlatform(catalog: Catalog, platform: string | null | undefined): Catalog;
/**
 * @typedef {import('./json.js').JSONValue} JSONValue
 * @typedef {import('./rules.js').Rule} Rule
 * @typedef {import('./state.js').DonationLimit} DonationLimit
 * @typedef {{maxDisplayCount?: number, maxDisplayDuration?: number, ignoresDisplayFrequency: boolean}} TipOptions
 * @typedef {{id: string, title: string}} Action
 * @typedef {{id: string, title: string, message?: string, image?: string, actions: Action[], rules: Rule[], options: TipOptions, targeting?: Rule[], enabled?: boolean, localizations?: {[tag: string]: import('./localization.js').TipLocalization}, platforms?: string[], experiment?: import('./experiment.js').TipExperiment}} TipDefinition
 * @typedef {{id: string, defaultValue: JSONValue, transient: boolean}} ParameterDefinition
 * @typedef {{id: string, donationLimit?: DonationLimit}} EventDefinition
 * @typedef {{id: string, priority: 'ordered' | 'firstAvailable', tips: string[]}} TipGroupDefinition
 * @typedef {{displayFrequency?: number, enabled?: boolean, platformSettings?: {[platform: string]: {displayFrequency?: number}}, parameters: ParameterDefinition[], events: EventDefinition[], tips: TipDefinition[], groups: TipGroupDefinition[]}} Catalog
 * @typedef {import('./json.js').JSONObject} JSONObject
 */
/**
 * Reads one member's JSON at `path` as a `T`, or throws a {@link CatalogError} naming `path`.
 * @template T
 * @typedef {(value: JSONValue, path: string) => T} Check
 */
/** A catalog that does not decode or validate; the message starts with the field. */
export class CatalogError extends Error {
}
export namespace DISPLAY_FREQUENCIES {
    const immediate: number;
    const hourly: number;
    const daily: number;
    const weekly: number;
    const monthly: number;
}
export type JSONValue = import('./json.js').JSONValue;
export type Rule = import('./rules.js').Rule;
export type DonationLimit = import('./state.js').DonationLimit;
export type TipOptions = {
    maxDisplayCount?: number;
    maxDisplayDuration?: number;
    ignoresDisplayFrequency: boolean;
};
export type Action = {
    id: string;
    title: string;
};
export type TipDefinition = {
    id: string;
    title: string;
    message?: string | undefined;
    image?: string | undefined;
    actions: Action[];
    rules: Rule[];
    options: TipOptions;
    targeting?: import("./rules.js").Rule[] | undefined;
    enabled?: boolean | undefined;
    localizations?: {
        [tag: string]: import("./localization.js").TipLocalization;
    } | undefined;
    platforms?: string[] | undefined;
    experiment?: import("./experiment.js").TipExperiment | undefined;
};
export type ParameterDefinition = {
    id: string;
    defaultValue: JSONValue;
    transient: boolean;
};
export type EventDefinition = {
    id: string;
    donationLimit?: DonationLimit;
};
export type TipGroupDefinition = {
    id: string;
    priority: 'ordered' | 'firstAvailable';
    tips: string[];
};
export type Catalog = {
    displayFrequency?: number | undefined;
    enabled?: boolean | undefined;
    platformSettings?: {
        [platform: string]: {
            displayFrequency?: number | undefined;
        };
    } | undefined;
    parameters: ParameterDefinition[];
    events: EventDefinition[];
    tips: TipDefinition[];
    groups: TipGroupDefinition[];
};
export type JSONObject = import('./json.js').JSONObject;
/**
 * Reads one member's JSON at `path` as a `T`, or throws a {@link CatalogError } naming `path`.
 */
export type Check<T> = (value: JSONValue, path: string) => T;
