/**
 * Configures TipSync for the page; elements on it use this instance.
 * @param {TipSyncOptions} options
 */
export function configure(options: TipSyncOptions): Promise<TipSync>;
/** A configured TipSync: the replica, its sync, and (in a browser) the tab that syncs. */
export class TipSync extends EventTarget {
    /** @param {TipSyncOptions} options */
    static configure(options: TipSyncOptions): Promise<TipSync>;
    /**
     * @private
     * @param {Replica} replica
     * @param {TipSyncOptions} options
     * @param {string} name
     */
    private constructor();
    /** @type {Replica} */
    replica: Replica;
    options: TipSyncOptions;
    name: string;
    /** Whether this tab holds the device's lock: it writes the log and, with a server, syncs. */
    leads: boolean;
    /** @type {SyncClient | null} */
    client: SyncClient | null;
    /** @type {BroadcastChannel | null} */
    channel: BroadcastChannel | null;
    /**
     * Writes sent to the syncing tab and not yet answered, by request id.
     * @type {Map<string, PendingCall>}
     */
    pending: Map<string, PendingCall>;
    /**
     * Tips whose reach is being written (protocol.md §13.12).
     * @type {Set<string>}
     */
    reaching: Set<string>;
    nextRequest: number;
    /**
     * This tab's writes, one after another (a write made before it led runs first).
     * @type {Promise<unknown>}
     */
    queue: Promise<unknown>;
    /**
     * The sync status (the syncing tab's, in every tab): `state` (`connecting`, `connected`,
     * `offline`, `refused` or `stopped`, protocol.md §17.4), `connected`, `hasSynced`, `heldForFirstSync`,
     * `pendingChanges`, `lastSyncedAt`, `lastError` (a message), `code` (the failure's protocol code),
     * `nextAttemptAt` (while offline or refused). Changes fire `syncstatus`.
     * @type {{state: string, connected: boolean, hasSynced: boolean, heldForFirstSync: boolean, pendingChanges: number, lastSyncedAt: number | null, lastError: string | null, code?: string | null, nextAttemptAt: number | null}}
     */
    syncStatus: {
        state: string;
        connected: boolean;
        hasSynced: boolean;
        heldForFirstSync: boolean;
        pendingChanges: number;
        lastSyncedAt: number | null;
        lastError: string | null;
        code?: string | null | undefined;
        nextAttemptAt: number | null;
    };
    /** Permanent failure codes already warned about on the console. */
    /** @type {Set<string>} */
    warned: Set<string>;
    /**
     * Whether this tab syncs with a server now: it holds the lock, was given a server, and its sync has
     * not stopped. Never true while nothing syncs.
     */
    get isSyncing(): boolean;
    syncing: Promise<void | undefined> | undefined;
    /**
     * Resolves true once this device has completed its first sync (in this tab or the one that syncs),
     * false when `timeout` milliseconds pass first.
     * @param {number} [timeout]
     * @returns {Promise<boolean>}
     */
    waitForFirstSync(timeout?: number | undefined): Promise<boolean>;
    /**
     * Donates to an event now, with an optional JSON payload.
     * @param {string} event
     * @param {JSONValue} [info]
     * @returns {Promise<void>}
     */
    donate(event: string, info?: import("./json.js").JSONValue | undefined): Promise<void>;
    /**
     * Sets a parameter rules read.
     * @param {string} id
     * @param {JSONValue} value
     * @returns {Promise<void>}
     */
    setParameter(id: string, value: JSONValue): Promise<void>;
    /**
     * Invalidates a tip on every device: `tipClosed` (default), `actionPerformed`, …
     * @param {string} tip
     * @param {string} [reason]
     * @returns {Promise<void>}
     */
    invalidate(tip: string, reason?: string | undefined): Promise<void>;
    /**
     * Makes an invalidated tip eligible again (a new display epoch).
     * @param {string} tip
     * @returns {Promise<void>}
     */
    resetEligibility(tip: string): Promise<void>;
    /**
     * Records that a tip was shown once, for `duration` seconds.
     * @param {string} tip
     * @param {number} [duration]
     * @returns {Promise<void>}
     */
    recordDisplay(tip: string, duration?: number | undefined): Promise<void>;
    /**
     * Deletes every donation of an event, everywhere.
     * @param {string} event
     * @returns {Promise<void>}
     */
    deleteDonations(event: string): Promise<void>;
    /** Removes every tip, event and parameter record, everywhere. */
    resetDatastore(): Promise<void>;
    /**
     * A tip's status now: what the page shows it by, so asking records the reach of the tip's running
     * experiment when it would be shown now (protocol.md §13.12) — in the holdout, where it reads
     * `pending`, as in the treatment. `explain()` only reads.
     * @returns {TipStatus}
     * @param {string} tip
     */
    status(tip: string): TipStatus;
    /**
     * Why a tip has its status now (protocol.md §13.9): `{tip, status, reason, …}` — e.g. `{reason:
     * 'rule', index: 0, expression, values: {'param:isLoggedIn': false}}`. `null` for an unknown tip.
     * @param {string} tip
     */
    explain(tip: string): {
        [member: string]: any;
    } | null;
    /**
     * Changes what targeting reads about this device (`platform`, `appVersion`, `locale`; protocol.md §13.8).
     * @param {import("./context.js").DeviceContext} context
     */
    setContext(context: import("./context.js").DeviceContext): void;
    /**
     * A tip's definition (title, message, image, actions) from the catalog in force.
     * @param {string} id
     */
    tip(id: string): import("./catalog.js").TipDefinition | undefined;
    /**
     * A tip's definition with its title, message, image and action titles in `locale` (default: the
     * device's; protocol.md §13.10, fallback `fr-CA` → `fr` → the tip's own). `undefined` for an unknown tip.
     * @param {string} id
     * @param {string | null} [locale]
     */
    content(id: string, locale?: string | null | undefined): import("./catalog.js").TipDefinition | undefined;
    /**
     * A group's current tip, or null: what the page shows the group by (it records reach, as `status()`).
     * @param {string} group
     */
    currentTip(group: string): import("./catalog.js").TipDefinition | null;
    /**
     * Calls `listener` with a tip's status now and whenever it changes.
     * @returns {() => void} stop
     * @param {string} tip
     * @param {(status: TipStatus) => void} listener
     */
    watch(tip: string, listener: (status: TipStatus) => void): () => void;
    /**
     * A tip's statuses as they change, as an async iterator.
     * @param {string} tip
     */
    statusUpdates(tip: string): AsyncGenerator<import("./status.js").TipStatus | undefined, void, unknown>;
    /**
     * Sets testing overrides (local only, never synced): `{showAll, hideAll, shown: [ids], hidden: [ids]}`.
     * @param {TestingOverrides} overrides
     */
    setTestingOverrides(overrides: TestingOverrides): void;
    /** Stops syncing (this tab). */
    stop(): void;
    stopped: boolean | undefined;
    #private;
}
/** The instance `<tipsync-tip>` elements use unless given another (`element.tipsync = …`). */
/** @type {TipSync | null} */
export let defaultTipSync: TipSync | null;
export type Catalog = import('./catalog.js').Catalog;
export type TipStatus = import('./status.js').TipStatus;
export type TestingOverrides = import('./status.js').TestingOverrides;
export type JSONValue = import('./json.js').JSONValue;
/**
 * `device`: the device name the token was made for (protocol.md §6); `server` and a token turn sync
 * on; `storage`: IndexedDB by default where it exists; `name`: the store's name (one per device);
 * `firstSyncTimeout`: seconds a device that never synced holds back tips that would be available
 * (default 5, 0: no hold; protocol.md §17.1); `symbols`: image files for the symbol names tips'
 * `image` may carry (`{star: 'icons/star.svg'}`; protocol.md §13.1, "Images") — `<tipsync-tip>`
 * shows a symbol it cannot map as no image; `context`: what targeting reads (`{platform, appVersion,
 * locale}`; protocol.md §13.8) — platform `web` and the page's `lang` unless given.
 */
export type TipSyncOptions = {
    device: string;
    catalog?: Catalog | string;
    server?: string;
    token?: string;
    tokenProvider?: () => Promise<string>;
    followsServerCatalog?: boolean;
    storage?: 'indexeddb' | 'memory';
    name?: string;
    overrides?: TestingOverrides;
    live?: boolean;
    firstSyncTimeout?: number;
    symbols?: Record<string, string>;
    context?: import('./context.js').DeviceContext;
};
export type SyncStatus = import('./sync.js').SyncStatus;
/**
 * a write another tab may ask the syncing tab to make
 */
export type WriteOperation = 'donate' | 'setParameter' | 'invalidate' | 'resetEligibility' | 'recordDisplay' | 'deleteDonations' | 'resetDatastore' | 'recordReach';
export type PendingCall = {
    operation: WriteOperation;
    args: unknown[];
    resolve: (value: void) => void;
    reject: (error: unknown) => void;
};
import { Replica } from "./replica.js";
import { SyncClient } from "./sync.js";
