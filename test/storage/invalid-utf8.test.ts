/**
 * Regression: bytes that are not UTF-8 in a stored line were read lossily and silently. A line of
 * `messages.jsonl` holding `\xff\xfe` showed U+FFFD with `issues: []`, `store verify` found nothing
 * (exit 0), `session export` copied the U+FFFD out, and the same bytes in `events.jsonl` passed
 * `rollout verify`; stdin errors named no line. Now every reader reports such a line as a read issue
 * (its value still read, with U+FFFD in place of the bad bytes), the verifiers count it as a
 * problem, export refuses, and stdin names the line of the first bad byte.
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import factory from "../../src/storage/adapters/files.ts";
import { invalidUtf8At, lineOfByte } from "../../src/util/utf8.ts";
import { parseJson, runCli, tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "./contract.ts";

const env = { FREECODE_STORE: "files" };
const cli = (home: string, args: string[], stdin?: string | Uint8Array) =>
  runCli(args, { home, env, ...(stdin !== undefined && { stdin }) });

/**
 * Overwrite the two bytes at `marker` in `file` with `\xff\xfe` (the file keeps its size); returns
 * the 1-based byte of its line they are at.
 */
function corrupt(file: string, marker: string): number {
  const bytes = readFileSync(file);
  const at = bytes.indexOf(marker);
  if (at < 0 || bytes.indexOf(marker, at + 1) >= 0) throw new Error(`marker ${marker} not unique`);
  bytes[at] = 0xff;
  bytes[at + 1] = 0xfe;
  writeFileSync(file, bytes);
  return at - bytes.lastIndexOf(10, at);
}

const messagesFile = (home: string, id: string) => {
  const sessions = join(home, "sessions");
  return join(sessions, readdirSync(sessions)[0]!, id, "messages.jsonl");
};
const eventsFile = (home: string, id: string) => join(home, "rollout", "sessions", id, "events.jsonl");

/** A files-store session of `count` messages whose texts are `text <i> QQ<i>.`; closed after. */
async function session(home: string, id: string, count: number): Promise<string> {
  const a = factory({ home, fsync: "never" });
  const msgs = Array.from({ length: count }, (_, i) =>
    msg(`m${i + 1}`, i % 2 ? "assistant" : "user", {
      parts: [{ type: "text", content: `text ${i + 1} QQ${i + 1}.` }],
    }),
  );
  await a.createSession(makeMeta({ id }), msgs);
  await a.close();
  return messagesFile(home, id);
}

describe("messages.jsonl with invalid UTF-8", () => {
  for (const count of [12, 3]) {
    // 12 lines are parsed as one run in one call, 3 line by line: both paths must see the bytes.
    test(`a bad line among ${count} is a read issue (line, file), its message still read`, async () => {
      await using home = await tempHome();
      const file = await session(home.path, "u1", count);
      const byte = corrupt(file, "QQ2.");
      const a = factory({ home: home.path, fsync: "never" });
      const read = await a.readMessages("u1");
      await a.close();
      expect(read.issues).toEqual([
        {
          file,
          line: 2,
          message: `invalid UTF-8 at byte ${byte} of the line: read with U+FFFD in its place`,
          torn: false,
          badUtf8: true,
        },
      ]);
      expect(read.messages).toHaveLength(count);
      expect(JSON.stringify(read.messages[1]!.parts)).toContain("\uFFFD\uFFFD2.");
    });
  }

  test("a real U+FFFD (valid UTF-8) is no issue", async () => {
    await using home = await tempHome();
    const a = factory({ home: home.path, fsync: "never" });
    const parts = [{ type: "text" as const, content: "a real \uFFFD here, ✓ é" }];
    await a.createSession(makeMeta({ id: "u2" }), [
      msg("m1", "user", { parts }),
      ...Array.from({ length: 9 }, (_, i) => msg(`n${i}`)),
    ]);
    const read = await a.readMessages("u2");
    await a.close();
    expect(read.issues).toEqual([]);
    expect(read.messages[0]!.parts).toEqual(parts);
  });

  test("a torn last line cut inside a character is torn, not invalid UTF-8", async () => {
    await using home = await tempHome();
    const file = await session(home.path, "u3", 2);
    appendFileSync(file, Buffer.from([...Buffer.from('{"id":"m3","parts":[{"text":"'), 0xe2, 0x9c]));
    const a = factory({ home: home.path, fsync: "never" });
    const read = await a.readMessages("u3");
    await a.close();
    expect(read.issues.map((i) => [i.line, i.torn])).toEqual([[3, true]]);
  });

  test("CLI: session show reports it, store verify fails on it, session export refuses", async () => {
    await using home = await tempHome();
    const file = await session(home.path, "u4", 12);
    expect(cli(home.path, ["store", "verify"]).code).toBe(0);
    corrupt(file, "QQ7.");
    const show = cli(home.path, ["session", "show", "u4", "--json"]);
    expect(show.code).toBe(0);
    expect(parseJson<{ issues: { line: number; message: string }[] }>(show).issues).toMatchObject([
      { line: 7, message: expect.stringContaining("invalid UTF-8") },
    ]);
    const verify = cli(home.path, ["store", "verify", "--json"]);
    expect(verify.code).toBe(1);
    expect(parseJson<{ problems: unknown[] }>(verify).problems).toEqual([
      {
        kind: "bad_line",
        sessionId: "u4",
        file,
        line: 7,
        detail: expect.stringContaining("invalid UTF-8"),
        repairable: false,
      },
    ]);
    // Not a torn tail: --repair leaves it (and says so by failing still).
    expect(cli(home.path, ["store", "verify", "--repair"]).code).toBe(1);
    const exported = cli(home.path, ["session", "export", "u4"]);
    expect(exported.code).toBe(1);
    expect(exported.stdout).toBe("");
    expect(exported.stderr).toContain(
      `${file}:7: session u4 has 1 unreadable message line(s): invalid UTF-8`,
    );
  });
});

describe("events.jsonl with invalid UTF-8", () => {
  const events = Array.from({ length: 12 }, (_, i) =>
    JSON.stringify({ type: "turn.started", turnId: `QQ${i + 1}.` }),
  );

  test("rollout verify reports it (exit 1), rollout cat and store verify name the line", async () => {
    await using home = await tempHome();
    expect(cli(home.path, ["rollout", "append", "e1"], `${events.join("\n")}\n`).code).toBe(0);
    const file = eventsFile(home.path, "e1");
    expect(cli(home.path, ["rollout", "verify", "e1"]).code).toBe(0);
    corrupt(file, "QQ4.");
    const verify = cli(home.path, ["rollout", "verify", "e1", "--json"]);
    expect(verify.code).toBe(1);
    const report = parseJson<{ events: number; problems: { kind: string; line: number; message: string }[] }>(
      verify,
    );
    expect(report.events).toBe(12);
    expect(report.problems).toMatchObject([
      { kind: "utf8", line: 4, file, message: expect.stringContaining("invalid UTF-8") },
    ]);
    expect(cli(home.path, ["rollout", "verify", "e1"]).stdout).toContain("utf8       line 4: invalid UTF-8");
    const cat = cli(home.path, ["rollout", "cat", "e1", "--json"]);
    expect(parseJson<{ events: unknown[]; issues: { line: number }[] }>(cat).issues).toMatchObject([
      { line: 4 },
    ]);
    // A fold (the trace's, which leaves tool outputs unparsed) reports it too, and keeps the event.
    const trace = parseJson<{ eventCount: number; parseErrors: unknown[] }>(
      cli(home.path, ["trace", "e1", "--json"]),
    );
    expect(trace.eventCount).toBe(12);
    expect(trace.parseErrors).toMatchObject([{ line: 4, message: expect.stringContaining("invalid UTF-8") }]);
    const store = cli(home.path, ["store", "verify", "--json"]);
    expect(store.code).toBe(1);
    expect(parseJson<{ problems: unknown[] }>(store).problems).toMatchObject([
      { kind: "bad_line", sessionId: "e1", file, line: 4, detail: expect.stringContaining("invalid UTF-8") },
    ]);
  });

  test("a line that is neither UTF-8 nor JSON is reported as both", async () => {
    await using home = await tempHome();
    expect(cli(home.path, ["rollout", "append", "e2"], `${events.slice(0, 2).join("\n")}\n`).code).toBe(0);
    appendFileSync(eventsFile(home.path, "e2"), Buffer.from([0x7b, 0xff, 0x0a]));
    const report = parseJson<{ problems: { kind: string; line: number }[] }>(
      cli(home.path, ["rollout", "verify", "e2", "--json"]),
    );
    expect(report.problems.map((p) => [p.kind, p.line])).toEqual([
      ["utf8", 3],
      ["json", 3],
    ]);
  });
});

describe("stdin that is not UTF-8 names the line of the first bad byte", () => {
  const bad = Buffer.concat([
    Buffer.from('{"role":"user","content":"ok"}\n{"role":"user","content":"b'),
    Buffer.from([0xff]),
    Buffer.from('"}\n'),
  ]);

  test("session append", async () => {
    await using home = await tempHome();
    expect(
      cli(home.path, ["session", "create", "--prompt", "hi", "--project", "/work/a", "--id", "s1"]).code,
    ).toBe(0);
    const r = cli(home.path, ["session", "append", "s1"], bad);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("<stdin>:2: stdin is not valid UTF-8 (byte 59)");
  });

  test("rollout append", async () => {
    await using home = await tempHome();
    const r = cli(home.path, ["rollout", "append", "s1"], Buffer.concat([Buffer.from("\n\n"), bad]));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("<stdin>:4: stdin is not valid UTF-8 (byte 61)");
  });
});

describe("invalidUtf8At", () => {
  const at = (...b: number[]) => invalidUtf8At(Uint8Array.from(b));
  test("valid text, and each kind of bad sequence at its lead byte", () => {
    expect(invalidUtf8At(Buffer.from("a é ✓ 𝄞 \uFFFD"))).toBe(-1);
    expect(at(0x61, 0xff)).toBe(1); // never UTF-8
    expect(at(0x61, 0x80)).toBe(1); // a lone continuation byte
    expect(at(0xc0, 0xaf)).toBe(0); // overlong
    expect(at(0xe0, 0x80, 0x80)).toBe(0); // overlong
    expect(at(0xed, 0xa0, 0x80)).toBe(0); // a surrogate
    expect(at(0xf4, 0x90, 0x80, 0x80)).toBe(0); // past U+10FFFF
    expect(at(0x61, 0xe2, 0x9c)).toBe(1); // cut short
    expect(at(0xe2, 0x9c, 0x93, 0xe2, 0x0a)).toBe(3); // cut short by a newline
  });
  test("a range is checked on its own", () => {
    const b = Buffer.from([0xe2, 0x9c, 0x93, 0x61]);
    expect(invalidUtf8At(b, 1, 4)).toBe(1);
    expect(invalidUtf8At(b, 0, 2)).toBe(0);
    expect(lineOfByte(Buffer.from("a\nb\nc"), 4)).toBe(3);
  });
});
