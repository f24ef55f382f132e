/**
 * @typedef {{
 *   pushedSeq: number, acknowledgedHighSeq: number, serverGeneration: string | null,
 *   uncertainPush: {seq: number, generation: string | null} | null, pullCursor: string | null, clockOffset: number
 * }} SyncProgress
 */
/** @returns {SyncProgress} */
export function emptyProgress(): SyncProgress;
/** Sets the acknowledged mark; the high mark never goes down. @param {SyncProgress} progress */
export function setPushed(progress: any, seq: any): void;
/** Remembers a push through `seq` that got no answer, with the generation known now. */
export function recordUncertainPush(progress: any, seq: any): void;
/** What an answer saying the server holds this device's log through `held` settles. */
export function noteServer(progress: any, held: any, generation: any): void;
/**
 * Before re-stamping after `clock_skew`: the highest seq whose stamps must stay (an unanswered push
 * the server may have stored), or 0 when the server provably never stored it.
 */
export function keptThroughUncertainPush(progress: any, held: any, generation: any): any;
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
};
