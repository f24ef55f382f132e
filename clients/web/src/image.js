// What a tip's `image` names on the web (protocol.md §13.1, "Images"): a reference to an image file
// (a URL, a path, a file name with an image extension) is that file; anything else is a symbol name
// (an SF Symbol such as `star`), shown only when the page maps it to a file. A name is never shown as
// text.

const REFERENCE = /^(?:[a-z][a-z0-9+.-]*:|\/|\.\.?\/)|\.(?:svg|png|jpe?g|gif|webp|avif)$/i;

/**
 * Whether `image` refers to an image file rather than naming a symbol.
 * @param {string} image
 */
export function isImageReference(image) {
  return REFERENCE.test(image);
}

/**
 * The image file to show for a tip's `image` on the web, or `null` to show none: a reference is
 * itself; a symbol name is what `symbols` maps it to, if anything.
 * @param {string | undefined} image
 * @param {Record<string, string>} [symbols] symbol name → image file (the `symbols` option)
 * @returns {string | null}
 */
export function imageSource(image, symbols = {}) {
  if (!image) return null;
  if (isImageReference(image)) return image;
  return Object.hasOwn(symbols, image) ? symbols[image] : null;
}
