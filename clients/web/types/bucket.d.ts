/**
 * MurmurHash3 x86 32-bit (Austin Appleby's `MurmurHash3_x86_32`) of bytes, as an unsigned integer.
 * @param {Uint8Array} bytes
 * @param {number} seed
 */
export function murmur3(bytes: Uint8Array, seed?: number): number;
/**
 * The account's bucket for `key`, 0 … 9999: the same in every client. The bytes hashed are the key's
 * first, then `0x00`, then the account's (protocol.md §13.8), whatever the order of the arguments.
 * @param {string} account
 * @param {string} key
 */
export function bucket(account: string, key: string): number;
/** Buckets are 0 … 9999: a threshold is in hundredths of a percent. */
export const BUCKETS: 10000;
