// TipSync for the web, the protocol's core (`@tipsync/web/core`): the JSON number model, HLC, changes,
// merge, compaction, rules, status, buckets, locales — every piece a tool, a test or another
// implementation of protocol.md may want, with no dependencies. An app needs only `@tipsync/web`
// (src/index.js), whose list is short and held by test/exports.test.js.

/**
 * @typedef {import('./json.js').JSONValue} JSONValue
 * @typedef {import('./hlc.js').Stamp} Stamp
 * @typedef {import('./change.js').Change} Change
 * @typedef {import('./state.js').Donation} Donation
 * @typedef {import('./state.js').DonationLimit} DonationLimit
 * @typedef {import('./rules.js').Rule} Rule
 * @typedef {import('./catalog.js').Catalog} Catalog
 * @typedef {import('./catalog.js').TipDefinition} TipDefinition
 * @typedef {import('./status.js').TipStatus} TipStatus
 */

export {
  JSONError, MAX_INTEGER, canonicalText, compareCodePoints, isNFC, isObject, jsonEquals, numberOf, numberText,
  numberViolation, object, parse, valueViolation,
} from './json.js';
export {
  HybridLogicalClock, MAX_HLC_MILLISECONDS, compareStamps, epochPrecedes, formatHLC, isHLC, laterEpoch, parseHLC,
  stampKey,
} from './hlc.js';
export {
  ChangeError, INVALIDATION_REASONS, KINDS, MAX_CHANGE_BYTES, changeText, decodeChange, encodeChange, sizeViolation, stampOf, violation,
} from './change.js';
export { DONATION_AGE_GRACE_MILLISECONDS, EventRecord, ReplicaState, donationPrecedes } from './state.js';
export { RuleEvaluationError, RuleEvaluator, RuleFormatError, arithmetic, compareValues, compareVersions, idsRead, parseRule, readsOf, ruleJSON } from './rules.js';
export { BUCKETS, bucket, murmur3 } from './bucket.js';
export { canonicalLocale, contextValue } from './context.js';
export { fallbackChain, localized } from './localization.js';
export { CatalogError, DISPLAY_FREQUENCIES, donationLimits, forPlatform, parseCatalog } from './catalog.js';
export { QUERY_LIMIT, StatusEvaluator } from './status.js';
export { superseded } from './compaction.js';
export { MemoryStore, IndexedDBStore } from './store.js';
export { Replica } from './replica.js';
export { SyncClient, SyncError } from './sync.js';
export { emptyProgress, firstSyncHolds, readProgress } from './progress.js';
export { imageSource, isImageReference } from './image.js';
export { TipSync, configure, defaultTipSync } from './tipsync.js';
