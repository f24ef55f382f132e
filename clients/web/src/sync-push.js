// The sync client's push (protocol.md §7): the outbox in batches the server admits, and what each
// refusal means — a gap resumes, a skewed clock re-stamps, a refused change is set aside, a `413`
// halves the batch, no answer leaves the push uncertain until a pull settles it.

import { encodeChange } from './change.js';
import { canonicalText } from './json.js';
import { keptThroughUncertainPush, noteServer, recordUncertainPush, setPushed } from './progress.js';
import { errorDetail, parseBody, refusedIndex, rejectionOf } from './sync-error.js';
import { clockCorrection, timed } from './sync-requests.js';

/** @typedef {import('./sync.js').SyncClient} SyncClient */
/** @typedef {import('./sync.js').SyncParts} SyncParts */

/** The most bytes of body a client puts in one push (protocol.md §7). */
export const MAX_PUSH_BODY_BYTES = 1_048_576;

const encoder = new TextEncoder();

/**
 * The first changes of `outbox` whose push body is at most MAX_PUSH_BODY_BYTES of UTF-8 (never fewer
 * than one), and that body.
 * @param {import('./change.js').Change[]} outbox
 */
export function pushBody(outbox, maxBytes = MAX_PUSH_BODY_BYTES) {
  const texts = [];
  let bytes = '{"changes":[]}'.length;
  for (const change of outbox) {
    const text = canonicalText(encodeChange(change));
    const size = encoder.encode(text).length + (texts.length > 0 ? 1 : 0);
    if (texts.length > 0 && bytes + size > maxBytes) break;
    texts.push(text);
    bytes += size;
  }
  return { batch: outbox.slice(0, texts.length), body: '{"changes":[' + texts.join(',') + ']}' };
}

/**
 * Pushes everything unsent, batch by batch (protocol.md §7).
 * @param {SyncClient} client
 * @param {SyncParts} parts
 * @param {AbortSignal} [signal]
 */
export async function pushAll(client, parts, signal) {
  await parts.firstContact();
  let restamped = false;
  for (;;) {
    const outbox = client.replica.outbox(client.pushLimit ?? client.pushBatchSize);
    if (outbox.length === 0) return;
    // At most MAX_PUSH_BODY_BYTES a push: a large outbox goes in pushes the server admits (protocol.md §7).
    const { batch, body } = pushBody(outbox);
    let response;
    let sent;
    try {
      ({ response, sent } = await timed(client, 'POST', '/v1/push', { body, signal }));
    } catch (error) {
      // No answer: the server may have stored the batch, and other devices pulled it.
      await client.replica.updateProgress((progress) => recordUncertainPush(progress, batch[batch.length - 1].seq));
      throw error;
    }
    const text = await response.text();
    if (response.status === 200) {
      const result = parseBody(text);
      const offset = clockCorrection(client, result.serverTime, sent);
      await client.replica.updateProgress((progress) => {
        if (offset !== null) progress.clockOffset = offset;
        setPushed(progress, result.highestSeq);
        noteServer(progress, result.highestSeq, result.generation);
      });
      client.publishStatus({ connected: true });
      continue;
    }
    const detail = errorDetail(text);
    if (response.status === 413 && batch.length > 1) {
      // Over a limit this server sets lower than the protocol's defaults: smaller pushes.
      client.pushLimit = Math.max(1, Math.floor(batch.length / 2));
      continue;
    }
    if (response.status === 409 && detail?.code === 'sequence_gap' && Number.isInteger(detail.expectedSeq)) {
      await client.replica.updateProgress((progress) => setPushed(progress, Math.max(0, detail.expectedSeq - 1)));
      continue;
    }
    if (response.status === 422 && detail?.code === 'clock_skew' && !restamped) {
      const offset = Number.isInteger(detail.serverTime) ? clockCorrection(client, detail.serverTime, sent, true) : null;
      const held = Number.isInteger(detail.highestSeq) ? detail.highestSeq : 0;
      const kept = await client.replica.updateProgress((progress) => {
        if (offset !== null) progress.clockOffset = offset;
        if (held > progress.pushedSeq) setPushed(progress, held);
        return keptThroughUncertainPush(progress, held, detail.generation ?? null);
      });
      await client.replica.restampUnacknowledged(kept);
      restamped = true;
      continue;
    }
    if (response.status === 422 && detail?.code === 'invalid_change') {
      // One change the server will never take: set it aside and push the rest (protocol.md §17.2).
      const index = refusedIndex(detail);
      const change = index >= 0 && index < batch.length ? await client.replica.setAsideUnsent(batch[index].seq) : null;
      if (change) {
        const failure = rejectionOf(response.status, text);
        client.setAside.push({ change, reason: detail.message });
        client.onRefusedChange?.({ change, reason: detail.message });
        parts.fail(failure);
        continue;
      }
    }
    if (response.status >= 500) {
      await client.replica.updateProgress((progress) => recordUncertainPush(progress, batch[batch.length - 1].seq));
    }
    throw rejectionOf(response.status, text);
  }
}
