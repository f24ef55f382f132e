// What targeting reads about the device and its person (protocol.md §13.8): platform, app version,
// locale (and its language) and the account. Local to the device, never synced.

/**
 * @typedef {{platform?: string | null, appVersion?: string | null, locale?: string | null, account?: string | null}} DeviceContext
 */

/**
 * A language tag with `-` between subtags and BCP 47's case conventions (`fr_ca` → `fr-CA`,
 * `zh-hant-tw` → `zh-Hant-TW`): the language lowercase, a four-letter script titlecased, a
 * two-letter region uppercase, every other subtag lowercase. Subtags are split at `-` and `_`, empty
 * ones dropped (`fr--ca` → `fr-CA`); "four-letter" and "two-letter" mean ASCII letters.
 * @param {string} tag
 */
export function canonicalLocale(tag) {
  return tag
    .split(/[-_]/)
    .filter((subtag) => subtag !== '')
    .map((subtag, index) => {
      if (index > 0 && /^[A-Za-z]{4}$/.test(subtag)) return subtag[0].toUpperCase() + subtag.slice(1).toLowerCase();
      if (index > 0 && /^[A-Za-z]{2}$/.test(subtag)) return subtag.toUpperCase();
      return subtag.toLowerCase();
    })
    .join('-');
}

/**
 * What `{"context": name}` reads: `platform`, `appVersion`, `locale`, `language` (the locale's
 * first subtag, lowercased) or `account`; null when unknown or for any other name.
 * @param {DeviceContext} context
 * @param {string} name
 */
export function contextValue(context, name) {
  switch (name) {
    case 'platform':
    case 'appVersion':
    case 'account':
      return context[name] ?? null;
    case 'locale': {
      // A tag with no subtag (empty, or separators only) is no locale.
      const canonical = context.locale ? canonicalLocale(context.locale) : '';
      return canonical === '' ? null : canonical;
    }
    case 'language': {
      const first = context.locale ? context.locale.split(/[-_]/).find((subtag) => subtag !== '') : undefined;
      return first ? first.toLowerCase() : null;
    }
    default:
      return null;
  }
}

/**
 * The `TipSync-Context` header's value (protocol.md §5): `platform=web; appVersion=2.4.1;
 * locale=fr-CA`, each value percent-encoded with only RFC 3986's unreserved characters kept; null
 * when the device knows none of the three. The account is never sent (the credential names it).
 * @param {DeviceContext} context
 * @returns {string | null}
 */
export function contextHeader(context) {
  /** @param {string} value */
  const encode = (value) =>
    encodeURIComponent(value).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  const pairs = /** @type {const} */ (['platform', 'appVersion', 'locale'])
    .filter((name) => typeof context[name] === 'string' && context[name] !== '')
    .map((name) => `${name}=${encode(/** @type {string} */ (context[name]))}`);
  return pairs.length > 0 ? pairs.join('; ') : null;
}
