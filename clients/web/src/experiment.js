// A randomized holdout on one tip (protocol.md §13.12): assignment by the rollout bucket of the key
// `experiment:<id>` (below `holdout × 100` is the holdout), and reach and exposure recorded as
// donations to the reserved events `tipsync.reach:<id>` and `tipsync.exposure:<id>`, merged like
// every donation so a person's first reach is the earliest on any of their devices.

import { bucket } from './bucket.js';

/**
 * @typedef {{id: string, holdout: number, goal: {event: string} | {actionPerformed: true}, window?: number, stoppedAt?: number}} TipExperiment
 * @typedef {'holdout' | 'treatment'} Arm
 */

/** The window when none is given: 7 days, in seconds. */
export const DEFAULT_WINDOW = 604800;
/** The bounds of `window`, in seconds: an hour to 90 days. */
export const WINDOW_BOUNDS = [3600, 7776000];

/** The experiment of a tip while it runs (not stopped), else undefined. */
export function runningExperiment(tip) {
  return tip.experiment && tip.experiment.stoppedAt === undefined ? tip.experiment : undefined;
}

/** Buckets below this are held out: `holdout × 100`, rounded. */
export function holdoutBuckets(experiment) {
  return Math.round(experiment.holdout * 100);
}

/** The account's arm: the same on every device and in every client. @returns {Arm} */
export function armOf(experiment, account) {
  return bucket(account, `experiment:${experiment.id}`) < holdoutBuckets(experiment) ? 'holdout' : 'treatment';
}

/** The event a record donates to: `tipsync.reach:<id>` or `tipsync.exposure:<id>`. */
export function recordEvent(record, experiment) {
  return `tipsync.${record}:${experiment.id}`;
}

/** The earliest record of this kind any device of the account made (milliseconds), or undefined. */
export function firstRecord(record, experiment, state) {
  return state.donations(recordEvent(record, experiment))[0]?.date;
}

/** Why `id` cannot name an experiment, or null. */
export function experimentIDProblem(id) {
  return /^[A-Za-z0-9._-]{1,64}$/.test(id) ? null : `an experiment id is 1 to 64 ASCII letters, digits, '-', '_' and '.'; got '${id}'`;
}

/**
 * Checks an experiment's members (after parsing); `path` names it, `events` the catalog's event ids.
 * @returns {string | null} the problem, as `path.member: …`
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
 */
export function reachingArm(tip, reason) {
  if (!runningExperiment(tip)) return null;
  if (reason.code === 'available') return 'treatment';
  if (reason.code === 'experiment' && reason.arm === 'holdout') return 'holdout';
  return null;
}
