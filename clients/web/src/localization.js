// A tip's content in the device's language (protocol.md §13.10): each of title, message, image and
// action titles from the first locale of the fallback chain that has it, else the tip's own.

import { canonicalLocale } from './context.js';

/**
 * @typedef {import('./catalog.js').TipDefinition} TipDefinition
 * @typedef {{title?: string, message?: string, image?: string, actions?: {[id: string]: string}}} TipLocalization
 */

/**
 * The locales `locale` falls back through: itself in canonical case, then with its last subtag removed, one at a time.
 * @param {string} locale
 */
export function fallbackChain(locale) {
  const subtags = canonicalLocale(locale).split('-').filter((subtag) => subtag !== '');
  const chain = [];
  while (subtags.length > 0) {
    chain.push(subtags.join('-'));
    subtags.pop();
  }
  return chain;
}

/**
 * The tip with its content in `locale` (a tip with no strings for it, or no locale, as written).
 * @param {TipDefinition} tip
 * @param {string | null | undefined} locale
 * @returns {TipDefinition}
 */
export function localized(tip, locale) {
  const localizations = tip.localizations;
  if (!localizations || !locale) return tip;
  const chain = fallbackChain(locale).filter((tag) => Object.prototype.hasOwnProperty.call(localizations, tag)).map((tag) => localizations[tag]);
  if (chain.length === 0) return tip;
  const pick = (/** @type {'title' | 'message' | 'image'} */ field) => chain.find((localization) => localization[field] !== undefined)?.[field];
  const result = { ...tip, title: pick('title') ?? tip.title };
  const message = pick('message') ?? tip.message;
  if (message !== undefined) result.message = message;
  const image = pick('image') ?? tip.image;
  if (image !== undefined) result.image = image;
  result.actions = tip.actions.map((action) => ({
    id: action.id,
    title: chain.find((localization) => localization.actions?.[action.id] !== undefined)?.actions?.[action.id] ?? action.title,
  }));
  return result;
}
