/** The experiment of a tip while it runs (not stopped), else undefined. */
export function runningExperiment(tip: any): any;
/** Buckets below this are held out: `holdout × 100`, rounded. */
export function holdoutBuckets(experiment: any): number;
/** The account's arm: the same on every device and in every client. @returns {Arm} */
export function armOf(experiment: any, account: any): "holdout" | "treatment";
/** The event a record donates to: `tipsync.reach:<id>` or `tipsync.exposure:<id>`. */
export function recordEvent(record: any, experiment: any): string;
/** The earliest record of this kind any device of the account made (milliseconds), or undefined. */
export function firstRecord(record: any, experiment: any, state: any): any;
/** Why `id` cannot name an experiment, or null. */
export function experimentIDProblem(id: any): string;
/**
 * Checks an experiment's members (after parsing); `path` names it, `events` the catalog's event ids.
 * @returns {string | null} the problem, as `path.member: …`
 */
export function experimentProblem(experiment: any, path: any, events: any): string | null;
/**
 * The arm whose reach asking a tip's status now records: the tip has a running experiment, the
 * device knows its account, and the tip is available (treatment) or held back only by the holdout.
 * @param {import('./status.js').StatusReason} reason
 * @returns {Arm | null}
 */
export function reachingArm(tip: any, reason: import('./status.js').StatusReason): Arm | null;
/**
 * @typedef {{id: string, holdout: number, goal: {event: string} | {actionPerformed: true}, window?: number, stoppedAt?: number}} TipExperiment
 * @typedef {'holdout' | 'treatment'} Arm
 */
/** The window when none is given: 7 days, in seconds. */
export const DEFAULT_WINDOW: 604800;
/** The bounds of `window`, in seconds: an hour to 90 days. */
export const WINDOW_BOUNDS: number[];
export type TipExperiment = {
    id: string;
    holdout: number;
    goal: {
        event: string;
    } | {
        actionPerformed: true;
    };
    window?: number;
    stoppedAt?: number;
};
export type Arm = 'holdout' | 'treatment';
