// When a client tries the server again (protocol.md §17.3): "full jitter" — each delay drawn
// uniformly from zero to a ceiling that doubles with every failure in a row — so that the devices an
// instance loses together (a restart, a crash, a deploy) come back spread out, not in one instant.
// The same rule as the Swift client's `Backoff`; milliseconds here.

/**
 * The ceiling after `failures` failures in a row before this one (0 for the first):
 * min(maximum, base × 2^failures).
 * @param {number} failures
 * @param {{base: number, maximum: number}} settings
 */
export function ceiling(failures, { base, maximum }) {
  return Math.min(maximum, base * 2 ** Math.min(Math.max(failures, 0), 62));
}

/**
 * The delay after `failures` failures in a row: `draw` (uniform in 0…1) of the ceiling, which is
 * never above `waited` — what was already waited since the first of them — or the base: a device is
 * back within about as long as the outage lasted once the server returns (protocol.md §17.3).
 * @param {number} failures
 * @param {number} draw
 * @param {{base: number, maximum: number}} settings
 * @param {number} [waited]
 */
export function delayAfterFailures(failures, draw, settings, waited = Infinity) {
  const capped = Math.min(ceiling(failures, settings), Math.max(settings.base, Number.isNaN(waited) ? 0 : waited));
  return clamped(draw) * capped;
}

/**
 * The delay before reopening a live stream that began and then ended without a failure (the server
 * restarted or closed it): `draw` of the base.
 * @param {number} draw
 * @param {{base: number, maximum: number}} settings
 */
export function delayAfterStreamEnded(draw, { base, maximum }) {
  return clamped(draw) * Math.min(base, maximum);
}

/** @param {number} draw */
function clamped(draw) {
  return Number.isNaN(draw) ? 1 : Math.min(Math.max(draw, 0), 1);
}

/**
 * The seconds a `Retry-After` header asks for: a whole number from 1 to 3600; missing or unreadable
 * counts as 1 (protocol.md §17.3).
 * @param {string | null} header
 */
export function retryAfterSeconds(header) {
  const seconds = header === null || !/^\s*\d+\s*$/.test(header) ? 1 : Number(header);
  return Math.min(Math.max(seconds, 1), 3600);
}
