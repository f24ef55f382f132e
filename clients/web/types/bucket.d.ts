/**
 * MurmurHash3 x86 32-bit (Austin Appleby's `MurmurHash3_x86_32`) of bytes, as an unsigned integer.
 * @param {Uint8Array} bytes
 * @param {number} seed
 */
export function murmur3(bytes: Uint8Array, seed?: number): number;
/** The account's bucket for `key`, 0 … 9999: the same in every client. */
export function bucket(account: any, key: any): number;
/** Buckets are 0 … 9999: a threshold is in hundredths of a percent. */
export const BUCKETS: 10000;
