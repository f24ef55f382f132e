// The rollout bucket (protocol.md §13.8): one function, to the byte, in every client, so an account
// lands in the same bucket on every device — MurmurHash3 x86 32-bit, seed 0, of the key's UTF-8
// bytes, one 0x00 byte and the account name's UTF-8 bytes; the hash h gives floor(h × 10000 / 2^32).

/** Buckets are 0 … 9999: a threshold is in hundredths of a percent. */
export const BUCKETS = 10000;

/**
 * MurmurHash3 x86 32-bit (Austin Appleby's `MurmurHash3_x86_32`) of bytes, as an unsigned integer.
 * @param {Uint8Array} bytes
 * @param {number} seed
 */
export function murmur3(bytes, seed = 0) {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const scramble = (/** @type {number} */ k) => Math.imul(((k = Math.imul(k, c1)) << 15) | (k >>> 17), c2);
  let hash = seed >>> 0;
  const blocks = bytes.length >> 2;
  for (let block = 0; block < blocks; block++) {
    const i = block * 4;
    const k = bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24);
    hash ^= scramble(k);
    hash = (hash << 13) | (hash >>> 19);
    hash = (Math.imul(hash, 5) + 0xe6546b64) | 0;
  }
  const tail = blocks * 4;
  let k = 0;
  switch (bytes.length & 3) {
    case 3: k ^= bytes[tail + 2] << 16; // falls through
    case 2: k ^= bytes[tail + 1] << 8; // falls through
    case 1:
      k ^= bytes[tail];
      hash ^= scramble(k);
  }
  hash ^= bytes.length;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/**
 * The account's bucket for `key`, 0 … 9999: the same in every client. The bytes hashed are the key's
 * first, then `0x00`, then the account's (protocol.md §13.8), whatever the order of the arguments.
 * @param {string} account
 * @param {string} key
 */
export function bucket(account, key) {
  const encoder = new TextEncoder();
  const keyBytes = encoder.encode(key);
  const accountBytes = encoder.encode(account);
  const bytes = new Uint8Array(keyBytes.length + 1 + accountBytes.length);
  bytes.set(keyBytes, 0);
  bytes.set(accountBytes, keyBytes.length + 1);
  // h × 10000 < 2^46: exact in a double, so the floor of the division is exact too.
  return Math.floor((murmur3(bytes, 0) * BUCKETS) / 4294967296);
}
