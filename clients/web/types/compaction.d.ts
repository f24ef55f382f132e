/** @typedef {import('./change.js').Change} Change */
/** @typedef {{position: number, change: Change}} LogEntry */
/**
 * The positions of the entries compaction drops.
 * @param {LogEntry[]} entries
 * @returns {Set<number>}
 */
export function superseded(entries: LogEntry[]): Set<number>;
export type Change = import('./change.js').Change;
export type LogEntry = {
    position: number;
    change: Change;
};
