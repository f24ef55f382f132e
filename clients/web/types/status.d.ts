export { QUERY_LIMIT };
/** Evaluates tip statuses over one state, at one instant. */
export class StatusEvaluator {
    /**
     * @param {ReplicaState} state
     * @param {Catalog} catalog
     * @param {number} now seconds since 1970
     * @param {{transientValues?: {[id: string]: JSONValue}, overrides?: TestingOverrides, heldForFirstSync?: boolean, context?: import('./context.js').DeviceContext}} options
     * `heldForFirstSync`: the device has not completed its first sync (protocol.md §17.1): a tip that
     * would be available is pending. `context`: what targeting reads (platform, appVersion, locale,
     * account; protocol.md §13.8).
     */
    constructor(state: ReplicaState, catalog: Catalog, now: number, { transientValues, overrides, heldForFirstSync, context }?: {
        transientValues?: {
            [id: string]: import("./json.js").JSONValue;
        } | undefined;
        overrides?: TestingOverrides | undefined;
        heldForFirstSync?: boolean | undefined;
        context?: import("./context.js").DeviceContext | undefined;
    });
    heldForFirstSync: boolean;
    deviceContext: import("./context.js").DeviceContext;
    state: import("./state.js").ReplicaState;
    catalog: import("./catalog.js").Catalog;
    now: number;
    transientValues: {
        [id: string]: import("./json.js").JSONValue;
    };
    overrides: TestingOverrides;
    limits: {
        [event: string]: import("./state.js").DonationLimit;
    };
    /** @type {Map<string, JSONValue>} */
    defaults: Map<string, JSONValue>;
    /**
     * A parameter's value: transient, synced, or its default (null when unknown).
     * @param {string} id
     * @returns {JSONValue}
     */
    parameterValue(id: string): JSONValue;
    /**
     * The donations of an event rules see: within its maximum age, the newest up to its count and 1000.
     * @param {string} event
     */
    donations(event: string): import("./state.js").Donation[];
    /**
     * Whether every rule holds.
     * @param {Rule[]} rules
     */
    rulesHold(rules: Rule[]): boolean;
    /**
     * The index of the first rule that does not hold, or -1: a rule that fails to evaluate does not
     * hold (protocol.md §13.5).
     * @param {import('./rules.js').Rule[]} rules
     */
    firstFailing(rules: import('./rules.js').Rule[]): number;
    /**
     * @param {TipDefinition} tip
     * @returns {TipStatus}
     */
    status(tip: TipDefinition): TipStatus;
    /**
     * Which step of "Status" decides the tip's status now, and with what: the one place the order of
     * the steps is written.
     * @param {TipDefinition} tip
     * @returns {StatusReason}
     */
    reason(tip: TipDefinition): StatusReason;
    /**
     * Why the tip has its status now, in protocol terms (protocol.md §13.9): `{tip, status, reason, …}`
     * with the rule that does not hold and the values it read, the invalidation's device and time, the
     * display totals and limit, or when display frequency lets go.
     * @param {TipDefinition} tip
     */
    explain(tip: TipDefinition): {
        [member: string]: any;
    };
    /**
     * What a rule reads, by name: `param:ID`, `donations:ID` (how many rules see), `context:NAME`, `bucket:KEY`.
     * @param {Rule} rule
     */
    readValues(rule: Rule): {
        [name: string]: import("./json.js").JSONValue;
    };
    /**
     * Whether the display frequency holds a never-shown tip back.
     * @param {TipDefinition} tip
     */
    isThrottled(tip: TipDefinition): boolean;
    /**
     * When the display frequency stops holding a never-shown tip back (milliseconds), or null.
     * @param {TipDefinition} tip
     * @returns {number | null}
     */
    throttledUntil(tip: TipDefinition): number | null;
    /**
     * The tip of a group whose reach showing the group now records (protocol.md §13.12): the current
     * tip as it would be if no experiment held a tip out, when it has a running experiment and a
     * reaching arm. A held-out tip is reached where the group would have shown it.
     * @param {TipDefinition[]} tips
     * @param {string} priority
     */
    tipReachedInGroup(tips: TipDefinition[], priority: string): import("./catalog.js").TipDefinition | null;
    /**
     * A group's current tip: the first available; `ordered` stops at the first pending.
     * @param {TipDefinition[]} tips
     * @param {string} priority
     */
    currentTip(tips: TipDefinition[], priority: string): import("./catalog.js").TipDefinition | null;
}
export type ReplicaState = import('./state.js').ReplicaState;
export type Catalog = import('./catalog.js').Catalog;
export type TipDefinition = import('./catalog.js').TipDefinition;
export type JSONValue = import('./json.js').JSONValue;
export type Rule = import('./rules.js').Rule;
export type TipStatus = 'available' | 'pending' | `invalidated:${string}`;
export type TestingOverrides = {
    showAll?: boolean;
    hideAll?: boolean;
    shown?: string[];
    hidden?: string[];
};
/**
 * Which step of "Status" decides (protocol.md §13.9): `code` is `testingOverride`, `invalidated`,
 * `maxDisplayCount`, `maxDisplayDuration`, `turnedOff`, `targeting`, `rule`, `displayFrequency`,
 * `firstSync`, `experiment` or `available`.
 */
export type StatusReason = {
    code: string;
    status: TipStatus;
    index?: number;
    count?: number;
    maximum?: number;
    duration?: number;
    allTips?: boolean;
    until?: number;
    experiment?: string;
    arm?: 'holdout' | null;
};
import { QUERY_LIMIT } from "./state.js";
