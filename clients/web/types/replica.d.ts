/** How often watches re-check statuses that change with time alone (the Swift library's period). */
export const TIME_REFRESH_MILLISECONDS: 2000;
/** One replica: a device's state, log, clock and catalog. Open with {@link Replica.open}. */
export class Replica {
    /**
     * Opens a replica over a store (in memory unless given), loading what it holds.
     * @param {{
     *   store?: ReplicaStore, device?: string, catalog?: Catalog | string, now?: () => number,
     *   overrides?: TestingOverrides, context?: DeviceContext
     * }} options `device`: the device id on first open (else a random UUID; later opens keep the stored
     *   one); `catalog`: the catalog bundled with the app; `now`: the physical clock, milliseconds;
     *   `context`: what targeting reads (protocol.md §13.8) — by default platform `web` and the page's
     *   `lang` (else `navigator.language`) as the locale.
     */
    static open({ store, device, catalog, now, overrides, context }?: {
        store?: ReplicaStore;
        device?: string;
        catalog?: Catalog | string;
        now?: () => number;
        overrides?: TestingOverrides;
        context?: DeviceContext;
    }): Promise<Replica>;
    /**
     * @private
     * @param {ReplicaStore} store
     * @param {Catalog} catalog
     * @param {() => number} now
     * @param {TestingOverrides} overrides
     */
    private constructor();
    set catalog(arg: import("./catalog.js").Catalog);
    /**
     * The catalog in force on this device: the server's when one was applied, else the bundled one —
     * its tips for this device's platform, with the platform's settings (protocol.md §13.11).
     * @type {Catalog}
     */
    get catalog(): import("./catalog.js").Catalog;
    /** @type {ReplicaStore} */
    store: ReplicaStore;
    /**
     * The catalog bundled with the app.
     * @type {Catalog}
     */
    bundledCatalog: Catalog;
    physicalNow: () => number;
    /** @type {TestingOverrides} */
    overrides: TestingOverrides;
    /** @type {{[id: string]: JSONValue}} */
    transientValues: {
        [id: string]: import("./json.js").JSONValue;
    };
    /** @type {Set<() => void>} */
    listeners: Set<() => void>;
    /** @type {Set<() => void>} */
    localListeners: Set<() => void>;
    /** @type {Set<() => void>} */
    progressListeners: Set<() => void>;
    /** @type {Promise<void>} */
    commits: Promise<void>;
    /**
     * The checks of every {@link watch}, run by one shared timer.
     * @type {Set<() => void>}
     */
    timeChecks: Set<() => void>;
    /** @type {ReturnType<typeof setInterval> | null} */
    timeTicker: ReturnType<typeof setInterval> | null;
    /**
     * What targeting reads about this device (protocol.md §13.8); set by {@link Replica.open}.
     * @type {DeviceContext}
     */
    deviceContext: DeviceContext;
    /**
     * This device's id (a UUID unless given on first open).
     * @type {string}
     */
    deviceID: string;
    /**
     * The sync bookkeeping.
     * @type {SyncProgress}
     */
    progress: SyncProgress;
    /**
     * The highest stamp seen.
     * @type {string}
     */
    observedHLC: string;
    /**
     * The server's catalog as last applied, and its version.
     * @type {{text: string, tag: string} | null}
     */
    serverCatalog: {
        text: string;
        tag: string;
    } | null;
    /**
     * Every change held, by (device, seq).
     * @type {Map<string, Change>}
     */
    log: Map<string, Change>;
    /**
     * This device's changes, by seq.
     * @type {Change[]}
     */
    local: Change[];
    /**
     * The merged state of every change held.
     * @type {ReplicaState}
     */
    state: ReplicaState;
    /**
     * This device's clock.
     * @type {HybridLogicalClock}
     */
    hlc: HybridLogicalClock;
    /** Milliseconds since 1970 on the corrected clock (the server's idea of time). */
    nowMilliseconds(): number;
    /** The sequence number of this device's latest change (0 before any). */
    get lastLocalSeq(): number;
    /**
     * Calls `listener` after every change of state (local, merged, catalog).
     * @returns {() => void} unsubscribe
     * @param {() => void} listener
     */
    subscribe(listener: () => void): () => void;
    /**
     * Calls `listener` after every local change is stored (what wakes a push).
     * @returns {() => void}
     * @param {() => void} listener
     */
    onLocalChange(listener: () => void): () => void;
    /**
     * Calls `listener` after every change of the sync bookkeeping (an answer settled).
     * @returns {() => void}
     * @param {() => void} listener
     */
    onProgress(listener: () => void): () => void;
    /**
     * Resolves true once this replica has completed its first sync (a pull reached the end of the
     * account's log, here or in the tab that syncs), false when `timeout` milliseconds pass first.
     * @param {number} timeout
     * @returns {Promise<boolean>}
     */
    waitForFirstSync(timeout: number): Promise<boolean>;
    /** Whether tips are held for the first sync now (protocol.md §17.1). */
    get isHeldForFirstSync(): boolean;
    /**
     * Starts the first-sync hold (what a sync client does as it starts): unless this replica has synced,
     * tips that would be available stay pending for at most `seconds`, or until the first pull completes.
     * The bookkeeping changes at once, before the returned promise (its storing) settles.
     * @param {number} seconds
     * @returns {Promise<boolean>} whether tips are held
     */
    holdForFirstSync(seconds: number): Promise<boolean>;
    /**
     * Donates to an event now, with an optional JSON payload.
     * @param {string} event
     * @param {JSONValue} [info]
     */
    donate(event: string, info?: import("./json.js").JSONValue | undefined): Promise<import("./change.js").Change[]>;
    /**
     * Sets a parameter: synced, or kept in memory when the catalog declares it transient.
     * @param {string} id
     * @param {JSONValue} value
     */
    setParameter(id: string, value: JSONValue): Promise<import("./change.js").Change[]>;
    /**
     * A parameter's value: transient, synced, or its default (null when unknown).
     * @param {string} id
     * @returns {JSONValue}
     */
    parameterValue(id: string): JSONValue;
    /**
     * Invalidates a tip everywhere (`tipClosed` by default: the person closed it).
     * @param {string} tip
     * @param {string} [reason]
     */
    invalidate(tip: string, reason?: string | undefined): Promise<import("./change.js").Change[]>;
    /**
     * Makes an invalidated tip eligible again and starts a new display epoch.
     * @param {string} tip
     */
    resetEligibility(tip: string): Promise<import("./change.js").Change[]>;
    /**
     * Records that a tip was on screen once, for `duration` seconds.
     * @param {string} tip
     * @param {number} [duration]
     */
    recordDisplay(tip: string, duration?: number | undefined): Promise<import("./change.js").Change[]>;
    /**
     * The arm whose reach asking the tip's status now would record (protocol.md §13.12): the tip has a
     * running experiment, would be shown now (treatment) or is held back only by the holdout, and the
     * account has no reach yet. `null`: nothing to record.
     * @returns {import('./experiment.js').Arm | null}
     * @param {string} id
     */
    reachDue(id: string): import('./experiment.js').Arm | null;
    /**
     * Records the tip's reach if due (``reachDue``): what an app's asking "show it now?" writes.
     * @param {string} id
     */
    recordReach(id: string): Promise<import("./change.js").Change[]>;
    /**
     * Deletes every donation of an event, on every device.
     * @param {string} event
     */
    deleteDonations(event: string): Promise<import("./change.js").Change[]>;
    /** Removes every tip, event and parameter record, on every device. */
    resetDatastore(): Promise<import("./change.js").Change[]>;
    /**
     * Merges changes from other devices, and `update` to the sync bookkeeping, stored together.
     * @template T
     * @param {Change[]} changes
     * @param {(progress: SyncProgress) => T} [update]
     * @returns {Promise<T | undefined>} what `update` returned (`undefined` without one)
     */
    applyRemote<T>(changes: Change[], update?: ((progress: SyncProgress) => T) | undefined): Promise<T | undefined>;
    /**
     * Changes the sync bookkeeping and stores it.
     * @template T
     * @param {(progress: SyncProgress) => T} update
     */
    updateProgress<T_1>(update: (progress: SyncProgress) => T_1): Promise<T_1>;
    /**
     * Gives this device's changes numbers after `highestSeq` (the server already holds a log of this
     * device that this replica does not: its storage was cleared), donation ids with them, and marks
     * `highestSeq` acknowledged. Only for changes no server holds (none was ever acknowledged).
     * @param {number} highestSeq
     */
    renumberAfter(highestSeq: number): Promise<void>;
    /**
     * Sets aside this device's change `seq`, which the server refused (`422 invalid_change`,
     * protocol.md §17.2), when no server can hold it (above every acknowledged or unanswered push):
     * it leaves the log, its effect is undone, and the unsent changes after it move down one sequence
     * number (a donation's id follows its number), so the outbox pushes on. Returns the change set
     * aside, or null when it may be on a server (then nothing changes).
     * @param {number} seq
     * @returns {Promise<Change | null>}
     */
    setAsideUnsent(seq: number): Promise<Change | null>;
    /** This device's changes not yet acknowledged, oldest first. */
    outbox(limit?: number): import("./change.js").Change[];
    /**
     * After `clock_skew` (protocol.md §10, §11): re-stamps every local change another device cannot
     * hold (above the acknowledged high mark and `keep`) from the corrected clock, moving payload times
     * back with the stamps, rebuilds the state and forgets the pull cursor.
     */
    restampUnacknowledged(keep?: number): Promise<void>;
    /** Drops log entries compaction makes unneeded (protocol.md §8), keeping this device's unsent ones. */
    compact(): void;
    /**
     * Applies the server's catalog (protocol.md §16): validated first, refused whole if invalid (the
     * replica keeps its catalog); stored for offline starts.
     * @param {string} text
     * @param {string} tag
     */
    applyServerCatalog(text: string, tag: string): Promise<void>;
    /**
     * Changes what targeting reads about this device (protocol.md §13.8): `platform`, `appVersion`,
     * `locale`; local, never synced.
     * @param {DeviceContext} context
     */
    setContext(context: DeviceContext): void;
    /**
     * Records the account's name (what rollout buckets hash; the sync client asks the server) and keeps it.
     * @param {string} name
     */
    setAccount(name: string): Promise<void>;
    /**
     * Why a tip has its status now (protocol.md §13.9): `{tip, status, reason, …}` — the rule or
     * targeting condition that does not hold with the values it read, who dismissed it and when, the
     * display totals and limit, until when display frequency holds it. `null` for an unknown tip.
     * @param {string} id
     */
    explain(id: string): {
        [member: string]: any;
    } | null;
    /**
     * Sets testing overrides (local only, never synced) and re-evaluates.
     * @param {TestingOverrides} overrides
     */
    setOverrides(overrides: TestingOverrides): void;
    /**
     * Takes the state another tab of this device holds (it writes the log and syncs; this one follows):
     * its changes, bookkeeping and server catalog, in memory only.
     * @param {Change[]} changes
     * @param {Partial<SyncProgress> | undefined} progress
     * @param {{text: string, tag: string} | null} serverCatalog
     */
    adopt(changes: Change[], progress: Partial<SyncProgress> | undefined, serverCatalog: {
        text: string;
        tag: string;
    } | null): void;
    /**
     * Takes the sync bookkeeping another tab of this device holds (in memory only).
     * @param {Partial<SyncProgress> | undefined} progress
     */
    adoptProgress(progress: Partial<SyncProgress> | undefined): void;
    /** Reads what another tab (or process) stored and adopts it. */
    reload(): Promise<void>;
    /** A status evaluator at `now` (milliseconds on the corrected clock). */
    evaluator(now?: number): StatusEvaluator;
    /**
     * A tip's definition from the catalog in force.
     * @returns {TipDefinition | undefined}
     * @param {string} id
     */
    tip(id: string): TipDefinition | undefined;
    /**
     * A tip's status now: `available`, `pending` or `invalidated:<reason>`; `pending` for an unknown tip.
     * @returns {TipStatus}
     * @param {string} id
     */
    status(id: string): TipStatus;
    /**
     * A group's current tip (its first available one; `ordered` stops at the first pending).
     * @param {string} groupID
     */
    currentTip(groupID: string): import("./catalog.js").TipDefinition | null;
    /**
     * The id of the tip of a group whose reach showing the group now would record (`null`: none due).
     * @param {string} groupID
     */
    groupReachDue(groupID: string): string | null;
    /**
     * A tip's status as it changes: calls `listener` with the current status, then with every new one
     * (changes, and time passing — a display frequency ending, a window sliding, the first-sync hold's
     * bound — checked every {@link TIME_REFRESH_MILLISECONDS} by one timer shared by every watch, so a
     * page at rest wakes once per period however many tips it shows). `onCheck` is called at every
     * check, before the status is read.
     * @returns {() => void} stop
     * @param {string} id
     * @param {(status: TipStatus) => void} listener
     * @param {() => void} [onCheck]
     */
    watch(id: string, listener: (status: TipStatus) => void, onCheck?: (() => void) | undefined): () => void;
    /**
     * A tip's statuses as an async iterator (the current one first).
     * @param {string} id
     */
    statusUpdates(id: string): AsyncGenerator<import("./status.js").TipStatus | undefined, void, unknown>;
    #private;
}
export type Change = import('./change.js').Change;
export type Catalog = import('./catalog.js').Catalog;
export type TipDefinition = import('./catalog.js').TipDefinition;
export type TipStatus = import('./status.js').TipStatus;
export type TestingOverrides = import('./status.js').TestingOverrides;
export type ReplicaStore = import('./store.js').ReplicaStore;
export type SyncProgress = import('./progress.js').SyncProgress;
export type JSONValue = import('./json.js').JSONValue;
export type DeviceContext = import('./context.js').DeviceContext;
import { ReplicaState } from "./state.js";
import { HybridLogicalClock } from "./hlc.js";
import { StatusEvaluator } from "./status.js";
