// The sync client's bookkeeping (protocol.md §8, §10, §11): how much of the outbox the server
// acknowledged, the highest mark it ever acknowledged, what it may have stored without answering,
// where to pull from, and the clock correction. Changed as one value per server answer.

/**
 * @typedef {{
 *   pushedSeq: number, acknowledgedHighSeq: number, serverGeneration: string | null,
 *   uncertainPush: {seq: number, generation: string | null} | null, pullCursor: string | null, clockOffset: number,
 *   hasSynced: boolean, firstSyncHoldUntil: number | null
 * }} SyncProgress
 * `hasSynced`: a pull reached the end of the account's log at least once; `firstSyncHoldUntil`:
 * until when (milliseconds, corrected clock) tips are held for the first sync (protocol.md §17.1).
 */

/** @returns {SyncProgress} */
export function emptyProgress() {
  return {
    pushedSeq: 0, acknowledgedHighSeq: 0, serverGeneration: null, uncertainPush: null, pullCursor: null, clockOffset: 0,
    hasSynced: false, firstSyncHoldUntil: null,
  };
}

/**
 * Bookkeeping as stored, completed: a replica stored before `hasSynced` existed that holds a cursor
 * has synced.
 * @param {Partial<SyncProgress> | undefined} stored
 * @returns {SyncProgress}
 */
export function readProgress(stored) {
  const progress = { ...emptyProgress(), ...(stored ?? {}) };
  if (stored && stored.hasSynced === undefined) progress.hasSynced = progress.pullCursor !== null;
  return progress;
}

/**
 * Whether tips are held for the first sync at `now` (milliseconds, corrected clock): the device has
 * never completed a pull and the bounded wait its sync client started has not passed (§17.1).
 * @param {SyncProgress} progress
 * @param {number} now
 */
export function firstSyncHolds(progress, now) {
  return !progress.hasSynced && progress.firstSyncHoldUntil !== null && now < progress.firstSyncHoldUntil;
}

/**
 * Sets the acknowledged mark; the high mark never goes down.
 * @param {SyncProgress} progress
 * @param {number} seq
 */
export function setPushed(progress, seq) {
  progress.pushedSeq = seq;
  progress.acknowledgedHighSeq = Math.max(progress.acknowledgedHighSeq, seq);
}

/**
 * Remembers a push through `seq` that got no answer, with the generation known now.
 * @param {SyncProgress} progress
 * @param {number} seq
 */
export function recordUncertainPush(progress, seq) {
  progress.uncertainPush = { seq: Math.max(progress.uncertainPush?.seq ?? 0, seq), generation: progress.serverGeneration };
}

/**
 * What an answer saying the server holds this device's log through `held` settles.
 * @param {SyncProgress} progress
 * @param {number} held
 * @param {string | null | undefined} generation
 */
export function noteServer(progress, held, generation) {
  if (generation) progress.serverGeneration = generation;
  if (progress.uncertainPush && held >= progress.uncertainPush.seq) progress.uncertainPush = null;
}

/**
 * Before re-stamping after `clock_skew`: the highest seq whose stamps must stay (an unanswered push
 * the server may have stored), or 0 when the server provably never stored it.
 * @param {SyncProgress} progress
 * @param {number} held
 * @param {string | null | undefined} generation
 */
export function keptThroughUncertainPush(progress, held, generation) {
  const uncertain = progress.uncertainPush;
  if (!uncertain || uncertain.seq <= held) return 0;
  if (uncertain.generation && uncertain.generation === generation) {
    progress.uncertainPush = null;
    return 0;
  }
  return uncertain.seq;
}
