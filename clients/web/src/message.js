// What a thrown value says: its `message` when it has one (every Error does), else the value as text.

/**
 * The message of a thrown value: `error.message` for an Error, else the value itself as text
 * (`throw 'text'` and rejections with plain values happen in page code a client calls).
 * @param {unknown} error
 * @returns {string}
 */
export function messageOf(error) {
  const message = /** @type {{message?: unknown} | null | undefined} */ (error)?.message;
  return String(message ?? error);
}
