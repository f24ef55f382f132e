// The sync client's bookkeeping (protocol.md §8, §10, §11): how much of the outbox the server
// acknowledged, the highest mark it ever acknowledged, what it may have stored without answering,
// where to pull from, and the clock correction. Changed as one value per server answer.

/**
 * @typedef {{
 *   pushedSeq: number, acknowledgedHighSeq: number, serverGeneration: string | null,
 *   uncertainPush: {seq: number, generation: string | null} | null, pullCursor: string | null, clockOffset: number
 * }} SyncProgress
 */

/** @returns {SyncProgress} */
export function emptyProgress() {
  return { pushedSeq: 0, acknowledgedHighSeq: 0, serverGeneration: null, uncertainPush: null, pullCursor: null, clockOffset: 0 };
}

/** Sets the acknowledged mark; the high mark never goes down. @param {SyncProgress} progress */
export function setPushed(progress, seq) {
  progress.pushedSeq = seq;
  progress.acknowledgedHighSeq = Math.max(progress.acknowledgedHighSeq, seq);
}

/** Remembers a push through `seq` that got no answer, with the generation known now. */
export function recordUncertainPush(progress, seq) {
  progress.uncertainPush = { seq: Math.max(progress.uncertainPush?.seq ?? 0, seq), generation: progress.serverGeneration };
}

/** What an answer saying the server holds this device's log through `held` settles. */
export function noteServer(progress, held, generation) {
  if (generation) progress.serverGeneration = generation;
  if (progress.uncertainPush && held >= progress.uncertainPush.seq) progress.uncertainPush = null;
}

/**
 * Before re-stamping after `clock_skew`: the highest seq whose stamps must stay (an unanswered push
 * the server may have stored), or 0 when the server provably never stored it.
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
