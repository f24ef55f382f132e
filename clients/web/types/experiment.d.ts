/**
 * The experiment of a tip while it runs (not stopped), else undefined.
 * @param {{experiment?: TipExperiment}} tip
 * @returns {TipExperiment | undefined}
 */
export function runningExperiment(tip: {
    experiment?: TipExperiment;
}): TipExperiment | undefined;
/**
 * Buckets below this are held out: `holdout × 100`, rounded.
 * @param {TipExperiment} experiment
 * @returns {number}
 */
export function holdoutBuckets(experiment: TipExperiment): number;
/**
 * The account's arm: the same on every device and in every client. Below the holdout's threshold h,
 * `holdout`; else, with n variants, the id of variant floor((bucket − h) × n / (10000 − h)).
 * @returns {Arm}
 * @param {TipExperiment} experiment
 * @param {string} account
 */
export function armOf(experiment: TipExperiment, account: string): Arm;
/**
 * Every arm: the holdout, then each variant (or `treatment`).
 * @returns {Arm[]}
 * @param {TipExperiment} experiment
 */
export function armsOf(experiment: TipExperiment): Arm[];
/**
 * The tip as `account` is shown it: with its variant's content when its running experiment puts the
 * account in a variant (protocol.md §13.12) — each of title, message, image the variant gives, and its
 * localizations, replace the tip's — else as it is. Localize the result for a locale.
 * @param {import('./catalog.js').TipDefinition} tip
 * @param {string | null | undefined} account
 */
export function contentFor(tip: import('./catalog.js').TipDefinition, account: string | null | undefined): import("./catalog.js").TipDefinition;
/**
 * The event a record donates to: `tipsync.reach:<id>` or `tipsync.exposure:<id>`.
 * @param {'reach' | 'exposure'} record
 * @param {TipExperiment} experiment
 * @returns {string}
 */
export function recordEvent(record: 'reach' | 'exposure', experiment: TipExperiment): string;
/**
 * The earliest record of this kind any device of the account made (milliseconds), or undefined.
 * @param {'reach' | 'exposure'} record
 * @param {TipExperiment} experiment
 * @param {import('./state.js').ReplicaState} state
 * @returns {number | undefined}
 */
export function firstRecord(record: 'reach' | 'exposure', experiment: TipExperiment, state: import('./state.js').ReplicaState): number | undefined;
/**
 * Why `id` cannot name an experiment, or null.
 * @param {string} id
 * @returns {string | null}
 */
export function experimentIDProblem(id: string): string | null;
/**
 * Checks an experiment's members (after parsing); `path` names it, `events` the catalog's event ids.
 * @returns {string | null} the problem, as `path.member: …`
 * @param {TipExperiment} experiment
 * @param {string} path
 * @param {Set<string>} events
 */
export function experimentProblem(experiment: TipExperiment, path: string, events: Set<string>): string | null;
/**
 * The arm whose reach asking a tip's status now records: the tip has a running experiment, the
 * device knows its account, and the tip is available (treatment) or held back only by the holdout.
 * @param {import('./status.js').StatusReason} reason
 * @returns {Arm | null}
 * @param {import('./catalog.js').TipDefinition} tip
 * @param {string | null | undefined} account
 */
export function reachingArm(tip: import('./catalog.js').TipDefinition, reason: import('./status.js').StatusReason, account: string | null | undefined): Arm | null;
/**
 * @typedef {{id: string, title?: string, message?: string, image?: string, localizations?: {[tag: string]: import('./localization.js').TipLocalization}}} Variant
 * @typedef {{id: string, holdout: number, goal: {event: string} | {actionPerformed: true}, window?: number, stoppedAt?: number, variants?: Variant[]}} TipExperiment
 * @typedef {string} Arm  `holdout`, `treatment`, or a variant's id
 */
/** At most this many variants. */
export const MAXIMUM_VARIANTS: 8;
/** The window when none is given: 7 days, in seconds. */
export const DEFAULT_WINDOW: 604800;
/** The bounds of `window`, in seconds: an hour to 90 days. */
export const WINDOW_BOUNDS: number[];
export type Variant = {
    id: string;
    title?: string | undefined;
    message?: string | undefined;
    image?: string | undefined;
    localizations?: {
        [tag: string]: import("./localization.js").TipLocalization;
    } | undefined;
};
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
    variants?: Variant[];
};
/**
 * `holdout`, `treatment`, or a variant's id
 */
export type Arm = string;
