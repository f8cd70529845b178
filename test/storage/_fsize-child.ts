/**
 * Run under a file size limit (`ulimit -f`, SIGXFSZ ignored): a write past it fails part way with
 * EFBIG, as on a full disk. Appends a message too big for the limit, then a small one, to the files
 * store in argv[2] (session "s" exists), and says what each did. argv: <home> <big bytes>
 */
import factory from "../../src/storage/adapters/files.ts";

const store = factory({ home: process.argv[2]!, fsync: "never" });
const big = "x".repeat(Number(process.argv[3]));
const say = (what: string) => process.stdout.write(`${what}\n`);
try {
  await store.appendMessages("s", [
    { id: "big", role: "user", parts: [{ type: "text", content: big }], timestamp: 2 },
  ]);
  say("big ok");
} catch (error) {
  say(`big failed ${(error as NodeJS.ErrnoException).code}`);
}
try {
  await store.appendMessages("s", [
    { id: "after", role: "user", parts: [{ type: "text", content: "small" }], timestamp: 3 },
  ]);
  say("small ok");
} catch (error) {
  say(`small failed ${(error as NodeJS.ErrnoException).code}`);
}
try {
  await store.appendEvents("s", [{ type: "note", timestamp: 4, text: big }]);
  say("event ok");
} catch (error) {
  say(`event failed ${(error as NodeJS.ErrnoException).code}`);
}
await store.appendEvents("s", [{ type: "note", timestamp: 5, text: "small" }]);
say("small event ok");
await store.close();
