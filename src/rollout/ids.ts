/**
 * Event ids: ULIDs (26 Crockford base32 characters, 48-bit millisecond time then 80 random bits),
 * monotonic within a millisecond. freecode's own ids were time + random and so not ordered within
 * the same millisecond; here a second id in the same millisecond increments the previous one's
 * random part, so ids sort in creation order within a process.
 */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const RANDOM_LEN = 16;

function encodeTime(ms: number): string {
  let out = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function randomDigits(): number[] {
  const bytes = crypto.getRandomValues(new Uint8Array(RANDOM_LEN));
  // The top digit stays below 16 so 2^79 increments fit before the part overflows.
  return Array.from(bytes, (b, i) => (i === 0 ? b & 15 : b & 31));
}

/** A generator of monotonic ULIDs; `now` is injectable for tests. */
export function createIdGenerator(now: () => number = Date.now): () => string {
  let lastMs = -1;
  let digits: number[] = [];
  // The time and the first 12 random digits change rarely: keep them as one cached string, so an id
  // in the same millisecond costs 4 characters of concatenation.
  let head = "";
  const SPLIT = 12;
  const cacheHead = (timePart: string) => {
    head = timePart;
    for (let i = 0; i < SPLIT; i++) head += ALPHABET[digits[i]!];
  };
  return () => {
    const ms = now();
    if (ms > lastMs) {
      lastMs = ms;
      digits = randomDigits();
      cacheHead(encodeTime(ms));
    } else {
      // Same millisecond (or the clock went back): keep the time, increment the random part.
      let i = RANDOM_LEN - 1;
      while (i >= 0 && digits[i] === 31) digits[i--] = 0;
      if (i < 0) throw new Error("ULID random part overflowed within one millisecond");
      digits[i]! += 1;
      if (i < SPLIT) cacheHead(head.slice(0, 10));
    }
    return (
      head + ALPHABET[digits[12]!] + ALPHABET[digits[13]!] + ALPHABET[digits[14]!] + ALPHABET[digits[15]!]
    );
  };
}

/** The process-wide id generator. */
export const newEventId = createIdGenerator();

/** The millisecond timestamp encoded in a ULID (for tools that sort by id). */
export function timeOfId(id: string): number {
  let ms = 0;
  for (let i = 0; i < 10; i++) ms = ms * 32 + ALPHABET.indexOf(id[i] ?? "0");
  return ms;
}
