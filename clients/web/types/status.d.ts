/**
 * @typedef {import('./state.js').ReplicaState} ReplicaState
 * @typedef {import('./catalog.js').Catalog} Catalog
 * @typedef {import('./catalog.js').TipDefinition} TipDefinition
 * @typedef {import('./json.js').JSONValue} JSONValue
 * @typedef {'available' | 'pending' | `invalidated:${string}`} TipStatus
 * @typedef {{showAll?: boolean, hideAll?: boolean, shown?: string[], hidden?: string[]}} TestingOverrides
 */
/** Rules see at most this many donations of an event (TipKit's rule). */
export const QUERY_LIMIT: 1000;
/** Evaluates tip statuses over one state, at one instant. */
export class StatusEvaluator {
    /**
     * @param {ReplicaState} state
     * @param {Catalog} catalog
     * @param {number} now seconds since 1970
     * @param {{transientValues?: {[id: string]: JSONValue}, overrides?: TestingOverrides, heldForFirstSync?: boolean}} options
     * `heldForFirstSync`: the device has not completed its first sync (protocol.md §17.1): a tip that
     * would be available is pending.
     */
    constructor(state: ReplicaState, catalog: Catalog, now: number, { transientValues, overrides, heldForFirstSync }?: {
        transientValues?: {
            [id: string]: import("./json.js").JSONValue;
        };
        overrides?: TestingOverrides;
        heldForFirstSync?: boolean;
    });
    heldForFirstSync: boolean;
    state: import("./state.js").ReplicaState;
    catalog: import("./catalog.js").Catalog;
    now: number;
    transientValues: {
        [id: string]: import("./json.js").JSONValue;
    };
    overrides: TestingOverrides;
    limits: any;
    /** @type {Map<string, JSONValue>} */
    defaults: Map<string, JSONValue>;
    /** A parameter's value: transient, synced, or its default (null when unknown). */
    parameterValue(id: any): import("./json.js").JSONValue;
    /** The donations of an event rules see: within its maximum age, the newest up to its count and 1000. */
    donations(event: any): import("./state.js").Donation[];
    /** Whether every rule holds (a rule that fails to evaluate does not). */
    rulesHold(rules: any): any;
    /** @param {TipDefinition} tip @returns {TipStatus} */
    status(tip: TipDefinition): TipStatus;
    /** Whether the display frequency holds a never-shown tip back. */
    isThrottled(tip: any): boolean;
    /** A group's current tip: the first available; `ordered` stops at the first pending. */
    currentTip(tips: any, priority: any): any;
}
export type ReplicaState = import('./state.js').ReplicaState;
export type Catalog = import('./catalog.js').Catalog;
export type TipDefinition = import('./catalog.js').TipDefinition;
export type JSONValue = import('./json.js').JSONValue;
export type TipStatus = 'available' | 'pending' | `invalidated:${string}`;
export type TestingOverrides = {
    showAll?: boolean;
    hideAll?: boolean;
    shown?: string[];
    hidden?: string[];
};
