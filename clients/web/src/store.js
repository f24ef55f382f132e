// Where a replica keeps its log and its small facts (device id, sync bookkeeping, the server's
// catalog). Every commit is one transaction: the changes a call makes and the facts that go with
// them are stored together or not at all. The state is the merge of the stored log, so a change and
// the state it produces are durable together.

import { decodeChange, encodeChange } from './change.js';
import { canonicalText, parse } from './json.js';

/** @typedef {import('./change.js').Change} Change */

/**
 * A replica's storage.
 * @typedef {{
 *   load(): Promise<{changes: Change[], meta: {[key: string]: any}}>,
 *   commit(update: {remove?: Change[], changes?: Change[], replace?: Change[], meta?: {[key: string]: any}}): Promise<void>,
 *   close?(): void
 * }} ReplicaStore
 */

const keyOf = (/** @type {Change} */ change) => `${change.device}\u0000${change.seq}`;

/** A store in memory: for tests, Node, and pages that keep nothing between visits. */
export class MemoryStore {
  constructor() {
    /** @type {Map<string, string>} */
    this.changes = new Map();
    /** @type {Map<string, string>} */
    this.meta = new Map();
  }

  async load() {
    return {
      changes: [...this.changes.values()].map((text) => decodeChange(parse(text))),
      meta: Object.fromEntries([...this.meta].map(([key, text]) => [key, JSON.parse(text)])),
    };
  }

  /**
   * Removes `remove`, then stores `changes` and `replace` and sets `meta` (undefined deletes a key).
   * @param {{remove?: Change[], changes?: Change[], replace?: Change[], meta?: {[key: string]: any}}} update
   */
  async commit({ remove = [], changes = [], replace = [], meta = {} }) {
    for (const change of remove) this.changes.delete(keyOf(change));
    for (const change of [...changes, ...replace]) this.changes.set(keyOf(change), canonicalText(encodeChange(change)));
    for (const [key, value] of Object.entries(meta)) {
      if (value === undefined) this.meta.delete(key);
      else this.meta.set(key, JSON.stringify(value));
    }
  }
}

/**
 * A durable store in the browser's IndexedDB: database `tipsync-<name>`, object stores `changes`
 * (keyed by device and seq, the change's canonical JSON text) and `meta`. Survives reloads; shared
 * by every tab of the origin.
 */
export class IndexedDBStore {
  /** @param {IDBDatabase} database */
  constructor(database) {
    this.database = database;
  }

  /** Opens (creating on first use) the store named `name`. */
  static async open(name = 'default', indexedDB = globalThis.indexedDB) {
    const request = indexedDB.open(`tipsync-${name}`, 1);
    request.onupgradeneeded = () => {
      request.result.createObjectStore('changes');
      request.result.createObjectStore('meta');
    };
    return new IndexedDBStore(await done(request));
  }

  async load() {
    const transaction = this.database.transaction(['changes', 'meta'], 'readonly');
    const texts = await done(transaction.objectStore('changes').getAll());
    const keys = await done(transaction.objectStore('meta').getAllKeys());
    const values = await done(transaction.objectStore('meta').getAll());
    return {
      changes: texts.map((text) => decodeChange(parse(text))),
      meta: Object.fromEntries(keys.map((key, index) => [String(key), JSON.parse(values[index])])),
    };
  }

  /**
   * Removes `remove`, then stores `changes` and `replace` and sets `meta`, in one transaction.
   * @param {{remove?: Change[], changes?: Change[], replace?: Change[], meta?: {[key: string]: any}}} update
   */
  async commit({ remove = [], changes = [], replace = [], meta = {} }) {
    const transaction = this.database.transaction(['changes', 'meta'], 'readwrite');
    const changeStore = transaction.objectStore('changes');
    const metaStore = transaction.objectStore('meta');
    for (const change of remove) changeStore.delete(keyOf(change));
    for (const change of [...changes, ...replace]) changeStore.put(canonicalText(encodeChange(change)), keyOf(change));
    for (const [key, value] of Object.entries(meta)) {
      if (value === undefined) metaStore.delete(key);
      else metaStore.put(JSON.stringify(value), key);
    }
    await new Promise((resolve, reject) => {
      transaction.oncomplete = () => resolve(undefined);
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error ?? new Error('IndexedDB transaction aborted'));
    });
  }

  close() {
    this.database.close();
  }
}

/**
 * @template T
 * @param {IDBRequest<T>} request
 * @returns {Promise<T>}
 */
function done(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}
