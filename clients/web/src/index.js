// TipSync for the web: feature tips that follow a person across devices, with no dependencies. What
// an app uses — the list is written in clients/web/README.md ("Public API") and held by
// test/exports.test.js, so it does not grow unnoticed. The protocol's core, for tools and other
// implementations, is `@tipsync/web/core` (src/core.js); the <tipsync-tip> element is
// `@tipsync/web/browser`.

/**
 * @typedef {import('./json.js').JSONValue} JSONValue
 * @typedef {import('./catalog.js').Catalog} Catalog
 * @typedef {import('./catalog.js').TipDefinition} TipDefinition
 * @typedef {import('./status.js').TipStatus} TipStatus
 */

export { TipSync, configure, defaultTipSync } from './tipsync.js';
export { Replica } from './replica.js';
export { SyncClient, SyncError } from './sync.js';
export { MemoryStore, IndexedDBStore } from './store.js';
export { CatalogError, parseCatalog } from './catalog.js';
export { ChangeError } from './change.js';
export { localized } from './localization.js';
export { imageSource, isImageReference } from './image.js';
