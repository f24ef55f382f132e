// A randomized holdout on one tip (protocol.md §13.12): assignment by the rollout bucket of the key
// `experiment:<id>` (below `holdout × 100` is the holdout, the rest split among the variants), and reach and exposure recorded as
// donations to the reserved events `tipsync.reach:<id>` and `tipsync.exposure:<id>`, merged like
// every donation so a person's first reach is the earliest on any of their devices.

import { bucket } from './bucket.js';

/**
 * @typedef {{id: string, title?: string, message?: string, image?: string, localizations?: {[tag: string]: import('./localization.js').TipLocalization}}} Variant
 * @typedef {{id: string, holdout: number, goal: {event: string} | {actionPerformed: true}, window?: number, stoppedAt?: number, variants?: Variant[]}} TipExperiment
 * @typedef {string} Arm  `holdout`, `treatment`, or a variant's id
 */

/** At most this many variants. */
export const MAXIMUM_VARIANTS = 8;

/** The window when none is given: 7 days, in seconds. */
export const DEFAULT_WINDOW = 604800;
/** The bounds of `window`, in seconds: an hour to 90 days. */
export const WINDOW_BOUNDS = [3600, 7776000];

/**
 * The experiment of a tip while it runs (not stopped), else undefined.
 * @param {{experiment?: TipExperiment}} tip
 * @returns {TipExperiment | undefined}
 */
export function runningExperiment(tip) {
  return tip.experiment && tip.experiment.stoppedAt === undefined ? tip.experiment : undefined;
}

/**
 * Buckets below this are held out: `holdout × 100`, rounded.
 * @param {TipExperiment} experiment
 * @returns {number}
 */
export function holdoutBuckets(experiment) {
  return Math.round(experiment.holdout * 100);
}

/**
 * The account's arm: the same on every device and in every client. Below the holdout's threshold h,
 * `holdout`; else, with n variants, the id of variant floor((bucket − h) × n / (10000 − h)).
 * @returns {Arm}
 * @param {TipExperiment} experiment
 * @param {string} account
 */
export function armOf(experiment, account) {
  const value = bucket(account, `experiment:${experiment.id}`);
  const threshold = holdoutBuckets(experiment);
  if (value < threshold) return 'holdout';
  const variants = experiment.variants ?? [];
  if (variants.length === 0) return 'treatment';
  return variants[Math.floor(((value - threshold) * variants.length) / (10000 - threshold))].id;
}

/**
 * Every arm: the holdout, then each variant (or `treatment`).
 * @returns {Arm[]}
 * @param {TipExperiment} experiment
 */
export function armsOf(experiment) {
  return ['holdout', ...((experiment.variants ?? []).length === 0 ? ['treatment'] : (experiment.variants ?? []).map((variant) => variant.id))];
}

/**
 * The tip as `account` is shown it: with its variant's content when its running experiment puts the
 * account in a variant (protocol.md §13.12) — each of title, message, image the variant gives, and its
 * localizations, replace the tip's — else as it is. Localize the result for a locale.
 * @param {import('./catalog.js').TipDefinition} tip
 * @param {string | null | undefined} account
 */
export function contentFor(tip, account) {
  const experiment = runningExperiment(tip);
  if (!experiment || typeof account !== 'string') return tip;
  const arm = armOf(experiment, account);
  const variant = experiment.variants?.find((candidate) => candidate.id === arm);
  if (!variant) return tip;
  const shown = { ...tip };
  /** @type {('title' | 'message' | 'image')[]} */
  const fields = ['title', 'message', 'image'];
  for (const field of fields) if (variant[field] !== undefined) shown[field] = /** @type {string} */ (variant[field]);
  if (variant.localizations !== undefined || fields.some((field) => variant[field] !== undefined)) {
    if (variant.localizations === undefined) delete shown.localizations;
    else shown.localizations = variant.localizations;
  }
  return shown;
}

/**
 * The event a record donates to: `tipsync.reach:<id>` or `tipsync.exposure:<id>`.
 * @param {'reach' | 'exposure'} record
 * @param {TipExperiment} experiment
 * @returns {string}
 */
export function recordEvent(record, experiment) {
  return `tipsync.${record}:${experiment.id}`;
}

/**
 * The earliest record of this kind any device of the account made (milliseconds), or undefined.
 * @param {'reach' | 'exposure'} record
 * @param {TipExperiment} experiment
 * @param {import('./state.js').ReplicaState} state
 * @returns {number | undefined}
 */
export function firstRecord(record, experiment, state) {
  return state.donations(recordEvent(record, experiment))[0]?.date;
}

/**
 * Why `id` cannot name an experiment, or null.
 * @param {string} id
 * @returns {string | null}
 */
export function experimentIDProblem(id) {
  return /^[A-Za-z0-9._-]{1,64}$/.test(id) ? null : `an experiment id is 1 to 64 ASCII letters, digits, '-', '_' and '.'; got '${id}'`;
}

/**
 * Checks an experiment's members (after parsing); `path` names it, `events` the catalog's event ids.
 * @returns {string | null} the problem, as `path.member: …`
 * @param {TipExperiment} experiment
 * @param {string} path
 * @param {Set<string>} events
 */
export function experimentProblem(experiment, path, events) {
  const idProblem = experimentIDProblem(experiment.id);
  if (idProblem) return `${path}.id: ${idProblem}`;
  const buckets = experiment.holdout * 100;
  if (!Number.isFinite(experiment.holdout) || experiment.holdout <= 0 || experiment.holdout >= 100 || Math.abs(buckets - Math.round(buckets)) >= 1e-6) {
    return `${path}.holdout: the percent of accounts held out, above 0 and below 100 in steps of 0.01; got ${experiment.holdout}`;
  }
  const window = experiment.window;
  if (window !== undefined && !(Number.isFinite(window) && window >= WINDOW_BOUNDS[0] && window <= WINDOW_BOUNDS[1])) {
    return `${path}.window: seconds from 3600 (an hour) to 7776000 (90 days); got ${window}`;
  }
  if (experiment.variants !== undefined) {
    if (experiment.variants.length === 0) return `${path}.variants: 1 to ${MAXIMUM_VARIANTS} variants; got none (leave it out for one arm)`;
    if (experiment.variants.length > MAXIMUM_VARIANTS) return `${path}.variants: at most ${MAXIMUM_VARIANTS} variants; got ${experiment.variants.length}`;
    const seen = new Set();
    for (const [index, variant] of experiment.variants.entries()) {
      const field = `${path}.variants[${index}].id`;
      const problem = experimentIDProblem(variant.id);
      if (problem) return `${field}: ${problem}`;
      if (variant.id === 'holdout' || variant.id === 'treatment') return `${field}: 'holdout' and 'treatment' name arms of their own; pick another id`;
      if (seen.has(variant.id)) return `${field}: '${variant.id}' is listed twice`;
      seen.add(variant.id);
    }
  }
  if ('event' in experiment.goal && !events.has(experiment.goal.event)) {
    return `${path}.goal.event: names event '${experiment.goal.event}', which the catalog's events do not declare`;
  }
  return null;
}

/**
 * The arm whose reach asking a tip's status now records: the tip has a running experiment, the
 * device knows its account, and the tip is available (treatment) or held back only by the holdout.
 * @param {import('./status.js').StatusReason} reason
 * @returns {Arm | null}
 * @param {import('./catalog.js').TipDefinition} tip
 * @param {string | null | undefined} account
 */
export function reachingArm(tip, reason, account) {
  const experiment = runningExperiment(tip);
  if (!experiment) return null;
  if (reason.code === 'available') return typeof account === 'string' ? armOf(experiment, account) : null;
  if (reason.code === 'experiment' && reason.arm === 'holdout') return 'holdout';
  return null;
}
