/**
 * Whether `image` refers to an image file rather than naming a symbol.
 * @param {string} image
 */
export function isImageReference(image: string): boolean;
/**
 * The image file to show for a tip's `image` on the web, or `null` to show none: a reference is
 * itself; a symbol name is what `symbols` maps it to, if anything.
 * @param {string | undefined} image
 * @param {Record<string, string>} [symbols] symbol name → image file (the `symbols` option)
 * @returns {string | null}
 */
export function imageSource(image: string | undefined, symbols?: Record<string, string> | undefined): string | null;
