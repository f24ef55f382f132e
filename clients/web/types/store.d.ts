/** A store in memory: for tests, Node, and pages that keep nothing between visits. */
export class MemoryStore {
    /** @type {Map<string, string>} */
    changes: Map<string, string>;
    /** @type {Map<string, string>} */
    meta: Map<string, string>;
    load(): Promise<{
        changes: import("./change.js").Change[];
        meta: {
            [k: string]: any;
        };
    }>;
    /**
     * Removes `remove`, then stores `changes` and `replace` and sets `meta` (undefined deletes a key).
     * @param {{remove?: Change[], changes?: Change[], replace?: Change[], meta?: {[key: string]: any}}} update
     */
    commit({ remove, changes, replace, meta }: {
        remove?: import("./change.js").Change[] | undefined;
        changes?: import("./change.js").Change[] | undefined;
        replace?: import("./change.js").Change[] | undefined;
        meta?: {
            [key: string]: any;
        } | undefined;
    }): Promise<void>;
}
/**
 * A durable store in the browser's IndexedDB: database `tipsync-<name>`, object stores `changes`
 * (keyed by device and seq, the change's canonical JSON text) and `meta`. Survives reloads; shared
 * by every tab of the origin.
 */
export class IndexedDBStore {
    /** Opens (creating on first use) the store named `name`. */
    static open(name?: string, indexedDB?: IDBFactory): Promise<IndexedDBStore>;
    /** @param {IDBDatabase} database */
    constructor(database: IDBDatabase);
    database: IDBDatabase;
    load(): Promise<{
        changes: import("./change.js").Change[];
        meta: {
            [k: string]: any;
        };
    }>;
    /**
     * Removes `remove`, then stores `changes` and `replace` and sets `meta`, in one transaction.
     * @param {{remove?: Change[], changes?: Change[], replace?: Change[], meta?: {[key: string]: any}}} update
     */
    commit({ remove, changes, replace, meta }: {
        remove?: import("./change.js").Change[] | undefined;
        changes?: import("./change.js").Change[] | undefined;
        replace?: import("./change.js").Change[] | undefined;
        meta?: {
            [key: string]: any;
        } | undefined;
    }): Promise<void>;
    close(): void;
}
export type Change = import('./change.js').Change;
/**
 * A replica's storage.
 */
export type ReplicaStore = {
    load(): Promise<{
        changes: Change[];
        meta: {
            [key: string]: any;
        };
    }>;
    commit(update: {
        remove?: import("./change.js").Change[] | undefined;
        changes?: import("./change.js").Change[] | undefined;
        replace?: import("./change.js").Change[] | undefined;
        meta?: {
            [key: string]: any;
        } | undefined;
    }): Promise<void>;
    close?(): void;
};
