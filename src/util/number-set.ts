/**
 * A set of numbers (53-bit id hashes, `util/id-hash.ts`) in one typed array, open addressing. An
 * importer remembers an entry per line of a transcript (to know a replayed one): as a `Set` the
 * 54,000 entries of a 129 MiB transcript cost ~9 MB of peak memory and ~5% of the import (a hash
 * table of boxed entries, grown by copying); here 8 bytes a slot, at most half full.
 */
const EMPTY = 0;

export class NumberSet {
  private slots = new Float64Array(1024);
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(n: number): boolean {
    const key = n === EMPTY ? Number.MIN_VALUE : n;
    const mask = this.slots.length - 1;
    for (let i = this.start(key, mask); ; i = (i + 1) & mask) {
      const at = this.slots[i]!;
      if (at === key) return true;
      if (at === EMPTY) return false;
    }
  }

  /** Add `n`; false when it was there already. */
  add(n: number): boolean {
    const key = n === EMPTY ? Number.MIN_VALUE : n;
    if ((this.count + 1) * 2 > this.slots.length) this.grow();
    const mask = this.slots.length - 1;
    for (let i = this.start(key, mask); ; i = (i + 1) & mask) {
      const at = this.slots[i]!;
      if (at === key) return false;
      if (at === EMPTY) {
        this.slots[i] = key;
        this.count++;
        return true;
      }
    }
  }

  /**
   * The numbers as text to save (base 36, comma-separated: letters and digits only, which no secret
   * pattern of `--redact` matches), and back: `NumberSet.parse` of it holds the same numbers. Text
   * that is not such a list gives an empty set (a saved state is derived data).
   */
  pack(): string {
    const out: string[] = [];
    for (const key of this.slots)
      if (key !== EMPTY) out.push(key === Number.MIN_VALUE ? "0" : key.toString(36));
    return out.join(",");
  }

  static parse(text: unknown): NumberSet {
    const set = new NumberSet();
    if (typeof text !== "string" || text === "") return set;
    for (const part of text.split(",")) {
      const n = Number.parseInt(part, 36);
      if (!Number.isSafeInteger(n) || n < 0 || n.toString(36) !== part) return new NumberSet();
      set.add(n);
    }
    return set;
  }

  /** A slot from the key's low bits, mixed (hashes are spread already; small integers are not). */
  private start(key: number, mask: number): number {
    const lo = key | 0;
    return (Math.imul(lo ^ (key / 4294967296), 0x9e3779b1) >>> 0) & mask;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Float64Array(old.length * 2);
    const mask = this.slots.length - 1;
    for (const key of old) {
      if (key === EMPTY) continue;
      let i = this.start(key, mask);
      while (this.slots[i] !== EMPTY) i = (i + 1) & mask;
      this.slots[i] = key;
    }
  }
}
