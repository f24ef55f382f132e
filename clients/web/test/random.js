// SplitMix64, as the Swift tests' seeded generator: reproducible orders for a seed.
export class SplitMix64 {
  constructor(seed) {
    this.state = BigInt.asUintN(64, BigInt(seed));
  }

  next() {
    this.state = BigInt.asUintN(64, this.state + 0x9e3779b97f4a7c15n);
    let z = this.state;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
    return z ^ (z >> 31n);
  }

  /** An integer in 0..<bound. */
  below(bound) {
    return Number(this.next() % BigInt(bound));
  }

  shuffled(items) {
    const result = [...items];
    for (let i = result.length - 1; i > 0; i--) {
      const j = this.below(i + 1);
      [result[i], result[j]] = [result[j], result[i]];
    }
    return result;
  }
}
