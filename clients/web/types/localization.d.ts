/**
 * @typedef {import('./catalog.js').TipDefinition} TipDefinition
 * @typedef {{title?: string, message?: string, image?: string, actions?: {[id: string]: string}}} TipLocalization
 */
/**
 * The locales `locale` falls back through: itself in canonical case, then with its last subtag removed, one at a time.
 * @param {string} locale
 */
export function fallbackChain(locale: string): string[];
/**
 * The tip with its content in `locale` (a tip with no strings for it, or no locale, as written).
 * @param {TipDefinition} tip
 * @param {string | null | undefined} locale
 * @returns {TipDefinition}
 */
export function localized(tip: TipDefinition, locale: string | null | undefined): TipDefinition;
export type TipDefinition = import('./catalog.js').TipDefinition;
export type TipLocalization = {
    title?: string | undefined;
    message?: string | undefined;
    image?: string | undefined;
    actions?: {
        [id: string]: string;
    } | undefined;
};
