/**
 * The message of a thrown value: `error.message` for an Error, else the value itself as text
 * (`throw 'text'` and rejections with plain values happen in page code a client calls).
 * @param {unknown} error
 * @returns {string}
 */
export function messageOf(error: unknown): string;
