/** Configures TipSync for the page; elements on it use this instance. @param {TipSyncOptions} options */
export function configure(options: any): Promise<TipSync>;
/** A configured TipSync: the replica, its sync, and (in a browser) the tab that syncs. */
export class TipSync extends EventTarget {
    /** @param {TipSyncOptions} options */
    static configure(options: TipSyncOptions): Promise<TipSync>;
    /** @private */
    private constructor();
    /** @type {Replica} */
    replica: Replica;
    options: any;
    name: any;
    /** Whether this tab holds the device's lock: it writes the log and, with a server, syncs. */
    leads: boolean;
    /** @type {SyncClient | null} */
    client: SyncClient | null;
    /** @type {BroadcastChannel | null} */
    channel: BroadcastChannel | null;
    pending: Map<any, any>;
    /** Tips whose reach is being written (protocol.md §13.12). @type {Set<string>} */
    reaching: Set<any>;
    nextRequest: number;
    /** This tab's writes, one after another (a write made before it led runs first). @type {Promise<unknown>} */
    queue: Promise<void>;
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
    warned: Set<any>;
    /**
     * Whether this tab syncs with a server now: it holds the lock, was given a server, and its sync has
     * not stopped. Never true while nothing syncs.
     */
    get isSyncing(): boolean;
    syncing: Promise<void | undefined> | undefined;
    /**
     * Resolves true once this device has completed its first sync (in this tab or the one that syncs),
     * false when `timeout` milliseconds pass first. @param {number} [timeout] @returns {Promise<boolean>}
     */
    waitForFirstSync(timeout?: number): Promise<boolean>;
    /** Donates to an event now, with an optional JSON payload. */
    donate(event: any, info: any): Promise<any>;
    /** Sets a parameter rules read. */
    setParameter(id: any, value: any): Promise<any>;
    /** Invalidates a tip on every device: `tipClosed` (default), `actionPerformed`, … */
    invalidate(tip: any, reason?: string): Promise<any>;
    /** Makes an invalidated tip eligible again (a new display epoch). */
    resetEligibility(tip: any): Promise<any>;
    /** Records that a tip was shown once, for `duration` seconds. */
    recordDisplay(tip: any, duration?: number): Promise<any>;
    /** Deletes every donation of an event, everywhere. */
    deleteDonations(event: any): Promise<any>;
    /** Removes every tip, event and parameter record, everywhere. */
    resetDatastore(): Promise<any>;
    /**
     * A tip's status now: what the page shows it by, so asking records the reach of the tip's running
     * experiment when it would be shown now (protocol.md §13.12) — in the holdout, where it reads
     * `pending`, as in the treatment. `explain()` only reads. @returns {TipStatus}
     */
    status(tip: any): import("./status.js").TipStatus;
    /**
     * Why a tip has its status now (protocol.md §13.9): `{tip, status, reason, …}` — e.g. `{reason:
     * 'rule', index: 0, expression, values: {'param:isLoggedIn': false}}`. `null` for an unknown tip.
     */
    explain(tip: any): {
        [member: string]: any;
    } | null;
    /** Changes what targeting reads about this device (`platform`, `appVersion`, `locale`; protocol.md §13.8). */
    setContext(context: any): void;
    /** A tip's definition (title, message, image, actions) from the catalog in force. */
    tip(id: any): import("./catalog.js").TipDefinition | undefined;
    /**
     * A tip's definition with its title, message, image and action titles in `locale` (default: the
     * device's; protocol.md §13.10, fallback `fr-CA` → `fr` → the tip's own). `undefined` for an unknown tip.
     */
    content(id: any, locale?: any): import("./catalog.js").TipDefinition | undefined;
    /** A group's current tip, or null: what the page shows the group by (it records reach, as `status()`). */
    currentTip(group: any): any;
    /** Calls `listener` with a tip's status now and whenever it changes. @returns {() => void} stop */
    watch(tip: any, listener: any): () => void;
    /** A tip's statuses as they change, as an async iterator. */
    statusUpdates(tip: any): AsyncGenerator<import("./status.js").TipStatus | undefined, void, unknown>;
    /** Sets testing overrides (local only, never synced): `{showAll, hideAll, shown: [ids], hidden: [ids]}`. */
    setTestingOverrides(overrides: any): void;
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
import { Replica } from "./replica.js";
import { SyncClient } from "./sync.js";
