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
export function emptyProgress(): SyncProgress;
/**
 * Bookkeeping as stored, completed: a replica stored before `hasSynced` existed that holds a cursor
 * has synced.
 * @param {Partial<SyncProgress> | undefined} stored
 * @returns {SyncProgress}
 */
export function readProgress(stored: Partial<SyncProgress> | undefined): SyncProgress;
/**
 * Whether tips are held for the first sync at `now` (milliseconds, corrected clock): the device has
 * never completed a pull and the bounded wait its sync client started has not passed (§17.1).
 * @param {SyncProgress} progress
 * @param {number} now
 */
export function firstSyncHolds(progress: SyncProgress, now: number): boolean;
/**
 * Sets the acknowledged mark; the high mark never goes down.
 * @param {SyncProgress} progress
 * @param {number} seq
 */
export function setPushed(progress: SyncProgress, seq: number): void;
/**
 * Remembers a push through `seq` that got no answer, with the generation known now.
 * @param {SyncProgress} progress
 * @param {number} seq
 */
export function recordUncertainPush(progress: SyncProgress, seq: number): void;
/**
 * What an answer saying the server holds this device's log through `held` settles.
 * @param {SyncProgress} progress
 * @param {number} held
 * @param {string | null | undefined} generation
 */
export function noteServer(progress: SyncProgress, held: number, generation: string | null | undefined): void;
/**
 * Before re-stamping after `clock_skew`: the highest seq whose stamps must stay (an unanswered push
 * the server may have stored), or 0 when the server provably never stored it.
 * @param {SyncProgress} progress
 * @param {number} held
 * @param {string | null | undefined} generation
 */
export function keptThroughUncertainPush(progress: SyncProgress, held: number, generation: string | null | undefined): number;
/**
 * `hasSynced`: a pull reached the end of the account's log at least once; `firstSyncHoldUntil`:
 * until when (milliseconds, corrected clock) tips are held for the first sync (protocol.md §17.1).
 */
export type SyncProgress = {
    pushedSeq: number;
    acknowledgedHighSeq: number;
    serverGeneration: string | null;
    uncertainPush: {
        seq: number;
        generation: string | null;
    } | null;
    pullCursor: string | null;
    clockOffset: number;
    hasSynced: boolean;
    firstSyncHoldUntil: number | null;
};
