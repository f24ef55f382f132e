// The conformance corpus's merge vectors (conformance/merge/, protocol.md §14), run by the JavaScript
// client: every vector in its listed order, reversed, and in 16 seeded orders with duplicates,
// batches and compaction between batches — the deliveries the Swift runner checks.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import {
  canonicalText, decodeChange, donationLimits, jsonEquals, parse, parseCatalog, ReplicaState, StatusEvaluator,
  superseded, violation, emptyProgress, firstSyncHolds, imageSource, isImageReference, forPlatform,
} from '../src/core.js';
import { bucket, murmur3 } from '../src/bucket.js';
import { armOf, firstRecord, recordEvent } from '../src/experiment.js';
import { localized } from '../src/localization.js';
import { SplitMix64 } from './random.js';

const directory = join(fileURLToPath(new URL('.', import.meta.url)), '../../../conformance/merge');
const names = readdirSync(directory).filter((name) => name.endsWith('.json')).sort();

function load(name) {
  const json = parse(readFileSync(join(directory, name), 'utf8'));
  const catalog = parseCatalog(json.catalog ?? {});
  const changes = json.changes.map((value, index) => {
    const change = decodeChange(value);
    const problem = violation(change);
    if (problem) throw new Error(`${name}: changes[${index}].${problem.message}`);
    return change;
  });
  return { catalog, changes, checks: json.expect };
}

function deliveries(changes) {
  const result = [
    ['in listed order', changes.map((change) => ({ batch: [change] }))],
    ['reversed', [...changes].reverse().map((change) => ({ batch: [change] }))],
  ];
  for (let seed = 1; seed <= 16; seed++) {
    const random = new SplitMix64(seed);
    const order = random.shuffled(changes);
    // Duplicates: a retried push or an overlapping pull delivers some changes twice.
    for (const change of changes) {
      if (random.below(4) === 0) order.splice(random.below(order.length + 1), 0, change);
    }
    const steps = [];
    let rest = order;
    while (rest.length > 0) {
      const size = 1 + random.below(Math.max(1, Math.min(rest.length, 4)));
      steps.push({ batch: rest.slice(0, size) });
      rest = rest.slice(size);
      if (random.below(3) === 0) steps.push({ compact: true });
    }
    result.push([`in seeded order ${seed}`, steps]);
  }
  return result;
}

function replay(steps, limits) {
  let state = new ReplicaState();
  let log = [];
  const seen = new Set();
  let nextPosition = 1;
  for (const step of steps) {
    if (step.batch) {
      for (const change of step.batch) {
        state.apply(change, limits);
        const key = `${change.device}\u0000${change.seq}`;
        if (!seen.has(key)) {
          seen.add(key);
          log.push({ position: nextPosition++, change });
        }
      }
    } else {
      const dropped = superseded(log);
      log = log.filter((entry) => !dropped.has(entry.position));
      state = new ReplicaState();
      for (const entry of log) state.apply(entry.change, limits);
    }
  }
  return state;
}

function mismatches(state, catalog, check) {
  const found = [];
  // A device's first-sync bookkeeping, when the check gives one (protocol.md §17.1).
  const heldForFirstSync = check.firstSync
    ? firstSyncHolds({ ...emptyProgress(), hasSynced: check.firstSync.hasSynced, firstSyncHoldUntil: check.firstSync.holdUntil }, Math.round(check.now * 1000))
    : false;
  // What targeting reads about the device (protocol.md §13.8), when the check gives it.
  // The device's transient values (local, never synced; protocol.md §4), when the check gives them.
  const transientValues = check.transient ? { ...check.transient } : {};
  const evaluator = new StatusEvaluator(state, catalog, check.now, { heldForFirstSync, context: check.context ?? {}, transientValues });
  const compare = (what, actual, wanted) => {
    if (!jsonEquals(actual, wanted)) found.push(`${what}: got ${canonicalText(actual)}, expected ${canonicalText(wanted)}`);
  };
  for (const [tip, wanted] of Object.entries(check.why ?? {})) {
    const definition = catalog.tips.find((candidate) => candidate.id === tip);
    if (!definition) {
      found.push(`why of '${tip}': not in the catalog`);
      continue;
    }
    // The deciding step's code, with the index of a targeting condition or rule, or the off switch's scope (§13.9).
    const explanation = evaluator.explain(definition);
    const detail = explanation.index ?? explanation.scope;
    compare(`why of '${tip}'`, explanation.reason + (detail === undefined ? '' : `:${detail}`), wanted);
  }
  for (const [tip, wanted] of Object.entries(check.status ?? {})) {
    const definition = catalog.tips.find((candidate) => candidate.id === tip);
    if (!definition) found.push(`status of '${tip}': not in the catalog`);
    else compare(`status of '${tip}'`, evaluator.status(definition), wanted);
  }
  // Each experiment's arm for the check's account and the account's first records (§13.12).
  for (const [id, wanted] of Object.entries(check.experiments ?? {})) {
    const experiment = catalog.tips.map((tip) => tip.experiment).find((candidate) => candidate?.id === id);
    if (!experiment) {
      found.push(`experiment '${id}': not in the catalog`);
      continue;
    }
    const account = check.context?.account;
    const actual = Object.assign(Object.create(null), {
      arm: typeof account === 'string' ? armOf(experiment, account) : null,
      firstReach: firstRecord('reach', experiment, state) ?? null,
      firstExposure: firstRecord('exposure', experiment, state) ?? null,
    });
    compare(`experiment '${id}'`, actual, wanted);
  }
  for (const [group, wanted] of Object.entries(check.groups ?? {})) {
    const definition = catalog.groups.find((candidate) => candidate.id === group);
    if (!definition) {
      found.push(`group '${group}': not in the catalog`);
      continue;
    }
    const tips = definition.tips.map((id) => catalog.tips.find((tip) => tip.id === id)).filter(Boolean);
    compare(`current tip of group '${group}'`, evaluator.currentTip(tips, definition.priority)?.id ?? null, wanted);
  }
  for (const [id, wanted] of Object.entries(check.parameters ?? {})) compare(`parameter '${id}'`, evaluator.parameterValue(id), wanted);
  for (const [event, wanted] of Object.entries(check.donations ?? {})) {
    compare(`donations of '${event}'`, evaluator.donations(event).map((donation) => donation.id), wanted);
  }
  for (const [tip, wanted] of Object.entries(check.displays ?? {})) {
    const totals = state.displayTotals(tip);
    const actual = Object.assign(Object.create(null), { count: totals.count, duration: totals.duration, appeared: state.hasDisplayed(tip) });
    compare(`displays of '${tip}'`, actual, wanted);
  }
  for (const [tip, wanted] of Object.entries(check.eligibility ?? {})) {
    const eligibility = state.eligibility(tip);
    const actual = !eligibility ? null : eligibility.state === 'eligible' ? 'eligible' : `invalidated:${eligibility.reason}`;
    compare(`eligibility of '${tip}'`, actual, wanted);
  }
  return found;
}

test('image strings read as conformance/catalog/images.json says (protocol.md §13.1)', () => {
  const { images } = parse(readFileSync(join(directory, '../catalog/images.json'), 'utf8'));
  assert.ok(images.length >= 10);
  for (const { image, reads } of images) {
    assert.equal(isImageReference(image) ? 'reference' : 'symbol', reads, image);
    // On the web: a reference is itself; a symbol only through the page's map, never as text.
    assert.equal(imageSource(image), reads === 'reference' ? image : null, image);
    assert.equal(imageSource(image, { [image]: 'mapped.svg' }), reads === 'reference' ? image : 'mapped.svg', image);
  }
  assert.equal(imageSource(undefined), null);
  assert.equal(imageSource('toString'), null, 'a map lookup reads only the map\'s own names');
});

test('catalogs are refused or accepted as conformance/catalog/validation.json says (protocol.md §13.1)', () => {
  const { catalogs } = parse(readFileSync(join(directory, '../catalog/validation.json'), 'utf8'));
  assert.ok(catalogs.length >= 10);
  for (const { description, catalog, refused } of catalogs) {
    let error = null;
    try {
      parseCatalog(catalog);
    } catch (caught) {
      error = caught;
    }
    if (refused === null) assert.equal(error, null, `${description}: refused (${error?.message}), expected accepted`);
    else assert.ok(error?.message.startsWith(`${refused}:`), `${description}: ${error ? error.message : 'accepted'}, expected refused naming ${refused}`);
  }
});

test('buckets are the corpus buckets: conformance/catalog/buckets.json (protocol.md §13.8)', () => {
  const { murmur3: hashes, buckets } = parse(readFileSync(join(directory, '../catalog/buckets.json'), 'utf8'));
  assert.ok(hashes.length >= 4 && buckets.length >= 30);
  for (const { text, seed, hash } of hashes) assert.equal(murmur3(new TextEncoder().encode(text), seed), hash, text);
  for (const entry of buckets) assert.equal(bucket(entry.account, entry.key), entry.bucket, `${entry.account} ${entry.key}`);
});

test('tips read in a locale as conformance/catalog/localizations.json says (protocol.md §13.10)', () => {
  const { catalog: json, cases } = parse(readFileSync(join(directory, '../catalog/localizations.json'), 'utf8'));
  const catalog = parseCatalog(json);
  assert.ok(cases.length >= 8);
  for (const { tip, locale, title, message, image, actions } of cases) {
    const shown = localized(catalog.tips.find((candidate) => candidate.id === tip), locale);
    const label = `${tip} in ${locale}`;
    assert.equal(shown.title, title, label);
    assert.equal(shown.message ?? null, message, label);
    assert.equal(shown.image ?? null, image, label);
    assert.deepEqual(Object.fromEntries(shown.actions.map((action) => [action.id, action.title])), { ...actions }, label);
  }
});

test('accounts land in the corpus arms: conformance/catalog/experiments.json (protocol.md §13.12)', () => {
  const { assignments, events } = parse(readFileSync(join(directory, '../catalog/experiments.json'), 'utf8'));
  assert.ok(assignments.length >= 8);
  for (const { experiment, account, bucket: wanted, arm } of assignments) {
    const parsed = parseCatalog({ tips: [{ id: 't', title: 'T', experiment }], events: [{ id: 'searched' }] }).tips[0].experiment;
    assert.equal(bucket(account, `experiment:${parsed.id}`), Number(wanted), account);
    assert.equal(armOf(parsed, account), arm, `${account} at ${parsed.holdout}%`);
  }
  for (const { experiment, reach, exposure } of events) {
    assert.equal(recordEvent('reach', { id: experiment }), reach);
    assert.equal(recordEvent('exposure', { id: experiment }), exposure);
  }
});

test('devices apply the catalog for their platform: conformance/catalog/platforms.json (protocol.md §13.11)', () => {
  const { catalog: json, cases } = parse(readFileSync(join(directory, '../catalog/platforms.json'), 'utf8'));
  const catalog = parseCatalog(json);
  for (const { platform, tips, groups, displayFrequency } of cases) {
    const applied = forPlatform(catalog, platform);
    assert.deepEqual(applied.tips.map((tip) => tip.id), tips, String(platform));
    assert.deepEqual(Object.fromEntries(applied.groups.map((group) => [group.id, group.tips])), { ...groups }, String(platform));
    assert.equal(applied.displayFrequency ?? 0, displayFrequency, String(platform));
  }
});

test('the corpus is there', () => {
  assert.ok(names.length >= 20, `conformance/merge/ holds ${names.length} vectors`);
});

for (const name of names) {
  test(`${name} holds in every delivery order`, () => {
    const vector = load(name);
    const limits = donationLimits(vector.catalog);
    const problems = [];
    for (const [label, steps] of deliveries(vector.changes)) {
      const state = replay(steps, limits);
      vector.checks.forEach((check, index) => {
        for (const mismatch of mismatches(state, vector.catalog, check)) problems.push(`expect[${index}], delivered ${label}: ${mismatch}`);
      });
    }
    assert.deepEqual(problems.slice(0, 10), []);
  });
}
