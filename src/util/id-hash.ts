/**
 * A 53-bit hash of an id string (two 32-bit Bun hashes), for sets that remember many ids: as
 * numbers they cost a few bytes each, where kept strings (~40-80 characters each) are memory a long
 * import must grow by, and a page of fresh memory costs ~16 µs on these VMs. Two ids that hash
 * alike are ~1 in 10^7 for 50,000 ids; a caller must treat a false match as harmless or rare.
 */
export const idHash = (id: string): number =>
  Bun.hash.xxHash32(id) * 0x20_0000 + (Bun.hash.crc32(id) & 0x1f_ffff);
