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
export function canonicalLocale(tag: string): string;
/**
 * What `{"context": name}` reads: `platform`, `appVersion`, `locale`, `language` (the locale's
 * first subtag, lowercased) or `account`; null when unknown or for any other name.
 * @param {DeviceContext} context
 * @param {string} name
 */
export function contextValue(context: DeviceContext, name: string): string | null;
/**
 * The `TipSync-Context` header's value (protocol.md §5): `platform=web; appVersion=2.4.1;
 * locale=fr-CA`, each value percent-encoded with only RFC 3986's unreserved characters kept; null
 * when the device knows none of the three. The account is never sent (the credential names it).
 * @param {DeviceContext} context
 * @returns {string | null}
 */
export function contextHeader(context: DeviceContext): string | null;
export type DeviceContext = {
    platform?: string | null;
    appVersion?: string | null;
    locale?: string | null;
    account?: string | null;
};
