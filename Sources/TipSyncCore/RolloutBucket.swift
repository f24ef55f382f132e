/// The bucket an account falls in for a key (protocol.md §13.8): an integer from 0 to 9999, the same
/// on every device of the account and in every client, so a rollout to "buckets below 1000" is the
/// same 10% of accounts everywhere, and stays so while the key does not change. Raising the threshold
/// only adds accounts (someone in at 10% is in at 20%); a new key reshuffles everyone.
///
/// The function, to the byte: MurmurHash3 x86 32-bit, seed 0, of the key's UTF-8 bytes, one `0x00`
/// byte and the account name's UTF-8 bytes (account names hold no control characters, section 6, so
/// the split is unambiguous); the 32-bit hash `h` gives `(h × 10000) >> 32`.
public enum RolloutBucket {
    /// Buckets are 0 ..< 10000: a threshold is in hundredths of a percent.
    public static let count = 10_000

    /// The account's bucket for `key`.
    public static func bucket(account: String, key: String) -> Int {
        var bytes = Array(key.utf8)
        bytes.append(0)
        bytes.append(contentsOf: account.utf8)
        return Int((UInt64(murmur3(bytes, seed: 0)) &* UInt64(count)) >> 32)
    }

    /// MurmurHash3 x86 32-bit (Austin Appleby's reference `MurmurHash3_x86_32`): blocks of four bytes
    /// read little-endian, then the tail, then the finalizer.
    public static func murmur3(_ bytes: [UInt8], seed: UInt32) -> UInt32 {
        let c1: UInt32 = 0xcc9e_2d51
        let c2: UInt32 = 0x1b87_3593
        var hash = seed
        func scramble(_ k: UInt32) -> UInt32 {
            var k = k &* c1
            k = (k << 15) | (k >> 17)
            return k &* c2
        }
        let blocks = bytes.count / 4
        for block in 0..<blocks {
            let i = block * 4
            let k =
                UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
            hash ^= scramble(k)
            hash = (hash << 13) | (hash >> 19)
            hash = hash &* 5 &+ 0xe654_6b64
        }
        let tail = blocks * 4
        var k: UInt32 = 0
        switch bytes.count & 3 {
        case 3:
            k ^= UInt32(bytes[tail + 2]) << 16
            fallthrough
        case 2:
            k ^= UInt32(bytes[tail + 1]) << 8
            fallthrough
        case 1:
            k ^= UInt32(bytes[tail])
            hash ^= scramble(k)
        default:
            break
        }
        hash ^= UInt32(truncatingIfNeeded: bytes.count)
        hash ^= hash >> 16
        hash = hash &* 0x85eb_ca6b
        hash ^= hash >> 13
        hash = hash &* 0xc2b2_ae35
        hash ^= hash >> 16
        return hash
    }
}
