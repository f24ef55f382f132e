/**
 * The ceiling after `failures` failures in a row before this one (0 for the first):
 * min(maximum, base × 2^failures).
 * @param {number} failures
 * @param {{base: number, maximum: number}} settings
 */
export function ceiling(failures: number, { base, maximum }: {
    base: number;
    maximum: number;
}): number;
/**
 * The delay after `failures` failures in a row: `draw` (uniform in 0…1) of the ceiling, which is
 * never above `waited` — what was already waited since the first of them — or the base: a device is
 * back within about as long as the outage lasted once the server returns (protocol.md §17.3).
 * @param {number} failures
 * @param {number} draw
 * @param {{base: number, maximum: number}} settings
 * @param {number} [waited]
 */
export function delayAfterFailures(failures: number, draw: number, settings: {
    base: number;
    maximum: number;
}, waited?: number | undefined): number;
/**
 * The delay before reopening a live stream that began and then ended without a failure (the server
 * restarted or closed it): `draw` of the base.
 * @param {number} draw
 * @param {{base: number, maximum: number}} settings
 */
export function delayAfterStreamEnded(draw: number, { base, maximum }: {
    base: number;
    maximum: number;
}): number;
/**
 * The seconds a `Retry-After` header asks for: a whole number from 1 to 3600; missing or unreadable
 * counts as 1 (protocol.md §17.3).
 * @param {string | null} header
 */
export function retryAfterSeconds(header: string | null): number;
