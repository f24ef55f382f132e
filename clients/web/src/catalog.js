// The catalog: the tips, their rules and options, the parameters and events rules read, groups, and
// the display frequency (protocol.md §13). A catalog that does not validate is refused whole; the
// error names the field.

import { experimentProblem } from './experiment.js';
import { compareCodePoints, isNFC, isObject, MAX_INTEGER, numberOf, parse, valueViolation } from './json.js';
import { canonicalLocale } from './context.js';
import { parseRule, idsRead, RuleFormatError } from './rules.js';
import { messageOf } from './message.js';

/**
 * @typedef {import('./json.js').JSONValue} JSONValue
 * @typedef {import('./rules.js').Rule} Rule
 * @typedef {import('./state.js').DonationLimit} DonationLimit
 * @typedef {{maxDisplayCount?: number, maxDisplayDuration?: number, ignoresDisplayFrequency: boolean}} TipOptions
 * @typedef {{id: string, title: string}} Action
 * @typedef {{id: string, title: string, message?: string, image?: string, actions: Action[], rules: Rule[], options: TipOptions, targeting?: Rule[], enabled?: boolean, localizations?: {[tag: string]: import('./localization.js').TipLocalization}, platforms?: string[], experiment?: import('./experiment.js').TipExperiment}} TipDefinition
 * @typedef {{id: string, defaultValue: JSONValue, transient: boolean}} ParameterDefinition
 * @typedef {{id: string, donationLimit?: DonationLimit}} EventDefinition
 * @typedef {{id: string, priority: 'ordered' | 'firstAvailable', tips: string[]}} TipGroupDefinition
 * @typedef {{displayFrequency?: number, enabled?: boolean, platformSettings?: {[platform: string]: {displayFrequency?: number}}, parameters: ParameterDefinition[], events: EventDefinition[], tips: TipDefinition[], groups: TipGroupDefinition[]}} Catalog
 * @typedef {import('./json.js').JSONObject} JSONObject
 */

/**
 * Reads one member's JSON at `path` as a `T`, or throws a {@link CatalogError} naming `path`.
 * @template T
 * @typedef {(value: JSONValue, path: string) => T} Check
 */

/** A catalog that does not decode or validate; the message starts with the field. */
export class CatalogError extends Error {}

/**
 * The members of a tip, a variant and a localization that are text.
 * @type {('title' | 'message' | 'image')[]}
 */
const TEXT_FIELDS = ['title', 'message', 'image'];

/** The named display frequencies, in seconds. */
export const DISPLAY_FREQUENCIES = { immediate: 0, hourly: 3600, daily: 86_400, weekly: 604_800, monthly: 2_592_000 };

/**
 * @param {JSONValue} value
 * @returns {string}
 */
function kindName(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value === 'bigint' ? 'number' : typeof value}`;
}

/**
 * Reads and validates a catalog from its JSON text or parsed JSON.
 * @param {string | JSONValue} input
 * @returns {Catalog}
 */
export function parseCatalog(input) {
  let json;
  try {
    json = typeof input === 'string' ? parse(input) : input;
  } catch (error) {
    throw new CatalogError(messageOf(error));
  }
  /**
   * @param {string} path
   * @param {string} message
   * @returns {never}
   */
  const fail = (path, message) => {
    throw new CatalogError(path ? `${path}: ${message}` : message);
  };
  /**
   * An optional member: `undefined` when absent or null.
   * @template T
   * @param {JSONObject} container
   * @param {string} path
   * @param {string} name
   * @param {Check<T>} check
   * @returns {T | undefined}
   */
  const read = (container, path, name, check) => {
    const full = path ? `${path}.${name}` : name;
    if (!Object.prototype.hasOwnProperty.call(container, name) || container[name] === null) return undefined;
    return check(container[name], full);
  };
  /**
   * A required member.
   * @template T
   * @param {JSONObject} container
   * @param {string} path
   * @param {string} name
   * @param {Check<T>} check
   * @returns {T}
   */
  const need = (container, path, name, check) => {
    const full = path ? `${path}.${name}` : name;
    if (!Object.prototype.hasOwnProperty.call(container, name)) fail(full, `no value for key '${name}'`);
    return check(container[name], full);
  };
  /** @type {Check<JSONObject>} */
  const object = (value, path) => (isObject(value) ? value : fail(path, `expected an object, found ${kindName(value)}`));
  /** @type {Check<string>} */
  const string = (value, path) => (typeof value === 'string' ? value : fail(path, `expected a string, found ${kindName(value)}`));
  /** @type {Check<boolean>} */
  const bool = (value, path) => (typeof value === 'boolean' ? value : fail(path, `expected a boolean, found ${kindName(value)}`));
  /** @type {Check<number>} */
  const integer = (value, path) => {
    if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= MAX_INTEGER) return value;
    return fail(path, `expected an integer within ±${MAX_INTEGER}, found ${typeof value === 'number' || typeof value === 'bigint' ? value : kindName(value)}`);
  };
  /** @type {Check<number>} */
  const number = (value, path) => {
    const result = numberOf(value);
    return result === undefined || typeof value === 'bigint' ? fail(path, `expected a number, found ${kindName(value)}`) : result;
  };
  /**
   * @template T
   * @param {Check<T>} item
   * @returns {Check<T[]>}
   */
  const array = (item) => (value, path) =>
    Array.isArray(value) ? value.map((element, index) => item(element, `${path}[${index}]`)) : fail(path, `expected an array, found ${kindName(value)}`);
  /** @type {Check<number>} */
  const seconds = (value, path) => {
    const result = number(value, path);
    if (!Number.isFinite(result) || result < 0 || result > MAX_INTEGER) {
      fail(path, `must be a number of seconds from 0 to ${MAX_INTEGER}, got ${result}`);
    }
    return result;
  };
  /** @type {Check<number>} */
  const count = (value, path) => {
    const result = integer(value, path);
    if (result < 0) fail(path, `must be 0 or more, got ${result}`);
    return result;
  };
  /**
   * A rule expression at `path` (13.2); its format errors name the path.
   * @type {Check<Rule>}
   */
  const ruleAt = (rule, rulePath) => {
    try {
      return parseRule(rule);
    } catch (error) {
      if (error instanceof RuleFormatError) fail(rulePath, error.message);
      throw error;
    }
  };
  const root = object(json, '');
  /** @type {Catalog} */
  const catalog = { parameters: [], events: [], tips: [], groups: [] };
  /** @type {Check<number>} */
  const frequencyAt = (value, path) => {
    if (typeof value === 'string') {
      if (!(value in DISPLAY_FREQUENCIES)) fail(path, `unknown display frequency '${value}'; use immediate, hourly, daily, weekly, monthly or seconds`);
      return DISPLAY_FREQUENCIES[/** @type {keyof typeof DISPLAY_FREQUENCIES} */ (value)];
    }
    return seconds(value, path);
  };
  const frequency = read(root, '', 'displayFrequency', frequencyAt);
  if (frequency !== undefined) catalog.displayFrequency = frequency;
  const enabled = read(root, '', 'enabled', bool);
  if (enabled !== undefined) catalog.enabled = enabled;
  const platformSettings = read(root, '', 'platformSettings', (value, settingsPath) => {
    const byPlatform = object(value, settingsPath);
    /** @type {{[platform: string]: {displayFrequency?: number}}} */
    const result = Object.create(null);
    for (const platform of Object.keys(byPlatform).sort(compareCodePoints)) {
      const platformPath = `${settingsPath}.${platform}`;
      const problem = platformProblem(platform);
      if (problem) fail(platformPath, problem);
      const settings = object(byPlatform[platform], platformPath);
      /** @type {{displayFrequency?: number}} */
      const parsed = {};
      const interval = read(settings, platformPath, 'displayFrequency', frequencyAt);
      if (interval !== undefined) parsed.displayFrequency = interval;
      result[platform] = parsed;
    }
    return result;
  });
  if (platformSettings !== undefined) catalog.platformSettings = platformSettings;
  catalog.parameters =
    read(root, '', 'parameters', array((value, path) => {
      const member = object(value, path);
      const defaultValue = Object.prototype.hasOwnProperty.call(member, 'default') ? member.default : null;
      const violation = valueViolation(defaultValue, `${path}.default`);
      if (violation) fail(violation.field, violation.message);
      return {
        id: need(member, path, 'id', string),
        defaultValue,
        transient: read(member, path, 'transient', bool) ?? false,
      };
    })) ?? [];
  catalog.events =
    read(root, '', 'events', array((value, path) => {
      const member = object(value, path);
      /** @type {EventDefinition} */
      const event = { id: need(member, path, 'id', string) };
      const limit = read(member, path, 'donationLimit', (limitValue, limitPath) => {
        const limitObject = object(limitValue, limitPath);
        /** @type {DonationLimit} */
        const result = {};
        const maximumCount = read(limitObject, limitPath, 'maximumCount', count);
        if (maximumCount !== undefined) result.maximumCount = maximumCount;
        const maximumAge = read(limitObject, limitPath, 'maximumAge', seconds);
        if (maximumAge !== undefined) result.maximumAge = maximumAge;
        return result;
      });
      if (limit) event.donationLimit = limit;
      return event;
    })) ?? [];
  /**
   * A tip's or a variant's `localizations` (13.10).
   * @type {Check<{[tag: string]: import('./localization.js').TipLocalization}>}
   */
  const localizationsAt = (value, localizationsPath) => {
    const byTag = object(value, localizationsPath);
    /** @type {{[tag: string]: import('./localization.js').TipLocalization}} */
    const result = Object.create(null);
    for (const tag of Object.keys(byTag).sort()) {
      const tagPath = `${localizationsPath}.${tag}`;
      const entry = object(byTag[tag], tagPath);
      /** @type {import('./localization.js').TipLocalization} */
      const localization = {};
      for (const field of TEXT_FIELDS) {
        const text = read(entry, tagPath, field, string);
        if (text !== undefined) localization[field] = text;
      }
      const actions = read(entry, tagPath, 'actions', (actionsValue, actionsPath) => {
        const titles = object(actionsValue, actionsPath);
        return Object.fromEntries(Object.keys(titles).map((id) => [id, string(titles[id], `${actionsPath}.${id}`)]));
      });
      if (actions !== undefined) localization.actions = actions;
      result[tag] = localization;
    }
    return result;
  };
  catalog.tips =
    read(root, '', 'tips', array((value, path) => {
      const member = object(value, path);
      /** @type {TipDefinition} */
      const tip = {
        id: need(member, path, 'id', string),
        title: need(member, path, 'title', string),
        actions: read(member, path, 'actions', array((action, actionPath) => {
          const actionObject = object(action, actionPath);
          return { id: need(actionObject, actionPath, 'id', string), title: need(actionObject, actionPath, 'title', string) };
        })) ?? [],
        rules: read(member, path, 'rules', array(ruleAt)) ?? [],
        options: { ignoresDisplayFrequency: false },
      };
      const localizations = read(member, path, 'localizations', localizationsAt);
      if (localizations !== undefined) tip.localizations = localizations;
      const platforms = read(member, path, 'platforms', array(string));
      if (platforms !== undefined) tip.platforms = platforms;
      const targeting = read(member, path, 'targeting', array(ruleAt));
      if (targeting !== undefined) tip.targeting = targeting;
      const enabled = read(member, path, 'enabled', bool);
      if (enabled !== undefined) tip.enabled = enabled;
      const experiment = read(member, path, 'experiment', (value, experimentPath) => {
        const members = object(value, experimentPath);
        const goalPath = `${experimentPath}.goal`;
        const goalMembers = need(members, experimentPath, 'goal', object);
        const event = read(goalMembers, goalPath, 'event', string);
        const actionPerformed = read(goalMembers, goalPath, 'actionPerformed', bool);
        if ((event === undefined) === (actionPerformed !== true)) fail(goalPath, 'a goal is {"event": ID} or {"actionPerformed": true}');
        /** @type {import('./experiment.js').TipExperiment} */
        const parsed = {
          id: need(members, experimentPath, 'id', string),
          holdout: need(members, experimentPath, 'holdout', number),
          goal: event !== undefined ? { event } : { actionPerformed: true },
        };
        const window = read(members, experimentPath, 'window', number);
        if (window !== undefined) parsed.window = window;
        const stoppedAt = read(members, experimentPath, 'stoppedAt', count);
        if (stoppedAt !== undefined) parsed.stoppedAt = stoppedAt;
        const variants = read(members, experimentPath, 'variants', array((variantValue, variantPath) => {
          const variantMembers = object(variantValue, variantPath);
          /** @type {import('./experiment.js').Variant} */
          const variant = { id: need(variantMembers, variantPath, 'id', string) };
          for (const field of TEXT_FIELDS) {
            const text = read(variantMembers, variantPath, field, string);
            if (text !== undefined) variant[field] = text;
          }
          const variantLocalizations = read(variantMembers, variantPath, 'localizations', localizationsAt);
          if (variantLocalizations !== undefined) variant.localizations = variantLocalizations;
          return variant;
        }));
        if (variants !== undefined) parsed.variants = variants;
        return parsed;
      });
      if (experiment !== undefined) tip.experiment = experiment;
      const message = read(member, path, 'message', string);
      if (message !== undefined) tip.message = message;
      const image = read(member, path, 'image', string);
      if (image !== undefined) tip.image = image;
      read(member, path, 'options', (options, optionsPath) => {
        const optionsObject = object(options, optionsPath);
        const maxDisplayCount = read(optionsObject, optionsPath, 'maxDisplayCount', count);
        if (maxDisplayCount !== undefined) tip.options.maxDisplayCount = maxDisplayCount;
        const maxDisplayDuration = read(optionsObject, optionsPath, 'maxDisplayDuration', seconds);
        if (maxDisplayDuration !== undefined) tip.options.maxDisplayDuration = maxDisplayDuration;
        tip.options.ignoresDisplayFrequency = read(optionsObject, optionsPath, 'ignoresDisplayFrequency', bool) ?? false;
      });
      return tip;
    })) ?? [];
  catalog.groups =
    read(root, '', 'groups', array((value, path) => {
      const member = object(value, path);
      const priority = read(member, path, 'priority', (text, priorityPath) => {
        const name = string(text, priorityPath);
        if (name !== 'ordered' && name !== 'firstAvailable') fail(priorityPath, `unknown group priority '${name}'; expected ordered or firstAvailable`);
        return name;
      }) ?? 'ordered';
      return { id: need(member, path, 'id', string), priority, tips: need(member, path, 'tips', array(string)) };
    })) ?? [];
  validate(catalog);
  return catalog;
}

/**
 * The catalog's rules between its parts: unique, NFC, non-empty ids; rules and groups name what exists.
 * @param {Catalog} catalog
 */
function validate(catalog) {
  /**
   * Not empty, NFC (section 1), unique among `ids`; each error names the field.
   * @param {string[]} ids
   * @param {string} member
   */
  const checkIDs = (ids, member) => {
    /** @type {Map<string, number>} */
    const seen = new Map();
    ids.forEach((id, index) => {
      const field = `${member}[${index}].id`;
      if (id === '') throw new CatalogError(`${field}: ids are not empty`);
      if (!isNFC(id)) throw new CatalogError(`${field}: '${id}' is not in Unicode normalization form C (NFC)`);
      if (seen.has(id)) throw new CatalogError(`${field}: '${id}' is already the id of ${member}[${seen.get(id)}]; ids must be unique`);
      seen.set(id, index);
    });
  };
  for (const member of /** @type {const} */ (['tips', 'parameters', 'events', 'groups'])) {
    checkIDs(/** @type {{id: string}[]} */ (catalog[member]).map(({ id }) => id), member);
  }
  // A tip's action ids: unique within the tip (the app tells its actions apart by them).
  catalog.tips.forEach((tip, index) => checkIDs(tip.actions.map(({ id }) => id), `tips[${index}].actions`));
  // Platforms (§13.11): at least one, each a platform name, none twice.
  catalog.tips.forEach((tip, index) => {
    const platforms = tip.platforms;
    if (platforms === undefined) return;
    if (platforms.length === 0) throw new CatalogError(`tips[${index}].platforms: list at least one platform, or leave it out for every platform`);
    platforms.forEach((platform, position) => {
      const problem = platformProblem(platform);
      if (problem) throw new CatalogError(`tips[${index}].platforms[${position}]: ${problem}`);
      if (platforms.indexOf(platform) < position) throw new CatalogError(`tips[${index}].platforms[${position}]: '${platform}' is listed twice`);
    });
  });
  // Localizations: keyed by a language tag in canonical case, naming only the tip's own actions (§13.10).
  catalog.tips.forEach((tip, index) => {
    const localizations = tip.localizations ?? {};
    for (const tag of Object.keys(localizations).sort(compareCodePoints)) {
      const field = `tips[${index}].localizations.${tag}`;
      const canonical = canonicalLocale(tag);
      if (tag === '' || canonical !== tag || !tag.split('-').every((subtag) => /^[A-Za-z0-9]{1,8}$/.test(subtag))) {
        throw new CatalogError(`${field}: a localization is keyed by a BCP 47 language tag in canonical case, such as fr or fr-CA${canonical !== tag && tag !== '' ? ` (write '${canonical}')` : ''}`);
      }
      const actionIDs = new Set(tip.actions.map((action) => action.id));
      const unknown = Object.keys(localizations[tag].actions ?? {}).sort(compareCodePoints).find((id) => !actionIDs.has(id));
      if (unknown !== undefined) throw new CatalogError(`${field}.actions.${unknown}: names no action of tips[${index}]`);
    }
  });
  const parameters = new Set(catalog.parameters.map((parameter) => parameter.id));
  const events = new Set(catalog.events.map((event) => event.id));
  catalog.tips.forEach((tip, tipIndex) => {
    /** @type {[Rule, string][]} */
    const checked = [...tip.rules.map((rule, index) => /** @type {[Rule, string]} */ ([rule, `rules[${index}]`])), ...(tip.targeting ?? []).map((rule, index) => /** @type {[Rule, string]} */ ([rule, `targeting[${index}]`]))];
    checked.forEach(([rule, member]) => {
      const field = `tips[${tipIndex}].${member}`;
      const read = idsRead(rule);
      const missingParameter = [...read.parameters].filter((id) => !parameters.has(id)).sort()[0];
      if (missingParameter !== undefined) {
        throw new CatalogError(`${field}: reads parameter '${missingParameter}', which the catalog's parameters do not declare`);
      }
      const missingEvent = [...read.events].filter((id) => !events.has(id)).sort()[0];
      if (missingEvent !== undefined) throw new CatalogError(`${field}: reads event '${missingEvent}', which the catalog's events do not declare`);
    });
  });
  // Experiments (§13.12): valid members, a declared goal event, ids unique across tips.
  /** @type {Map<string, number>} */
  const experimentIDs = new Map();
  catalog.tips.forEach((tip, index) => {
    if (!tip.experiment) return;
    const path = `tips[${index}].experiment`;
    const problem = experimentProblem(tip.experiment, path, events);
    if (problem) throw new CatalogError(problem);
    if (experimentIDs.has(tip.experiment.id)) {
      throw new CatalogError(`${path}.id: '${tip.experiment.id}' is already the id of tips[${experimentIDs.get(tip.experiment.id)}].experiment; ids must be unique`);
    }
    experimentIDs.set(tip.experiment.id, index);
  });
  const tips = new Set(catalog.tips.map((tip) => tip.id));
  catalog.groups.forEach((group, groupIndex) => {
    const index = group.tips.findIndex((id) => !tips.has(id));
    if (index >= 0) {
      throw new CatalogError(`groups[${groupIndex}].tips[${index}]: names tip '${group.tips[index]}', which the catalog's tips do not declare`);
    }
  });
}

/**
 * Each event's donation limit, by event id.
 * @returns {{[event: string]: DonationLimit}}
 * @param {Catalog} catalog
 */
export function donationLimits(catalog) {
  const limits = Object.create(null);
  for (const event of catalog.events) if (event.donationLimit && !(event.id in limits)) limits[event.id] = event.donationLimit;
  return limits;
}

/**
 * Why `name` cannot name a platform (protocol.md §13.11): 1 to 32 lowercase ASCII letters, digits and `-`.
 * @param {string} name
 * @returns {string | null}
 */
function platformProblem(name) {
  return /^[a-z0-9-]{1,32}$/.test(name) ? null : `a platform is 1 to 32 lowercase letters, digits and '-', such as ios, macos or web; got '${name}'`;
}

/**
 * The catalog a device of `platform` applies (protocol.md §13.11): the tips for it or for every
 * platform, groups without the others, and the platform's settings over the catalog's. A device that
 * does not know its platform gets only the tips for every platform.
 * @param {Catalog} catalog
 * @param {string | null | undefined} platform
 * @returns {Catalog}
 */
export function forPlatform(catalog, platform) {
  if (!catalog.tips.some((tip) => tip.platforms !== undefined) && catalog.platformSettings === undefined) return catalog;
  const tips = catalog.tips.filter((tip) => tip.platforms === undefined || (typeof platform === 'string' && tip.platforms.includes(platform)));
  const kept = new Set(tips.map((tip) => tip.id));
  const result = { ...catalog, tips, groups: catalog.groups.map((group) => ({ ...group, tips: group.tips.filter((id) => kept.has(id)) })) };
  const frequency = typeof platform === 'string' ? catalog.platformSettings?.[platform]?.displayFrequency : undefined;
  if (frequency !== undefined) result.displayFrequency = frequency;
  return result;
}
