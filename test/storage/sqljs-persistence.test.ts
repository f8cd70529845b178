/**
 * How the sqljs and json adapters persist a whole-file image (`_image.ts`), tested with real
 * processes: two writers never lose each other's updates, an acknowledged write survives SIGKILL,
 * appends do not rewrite the image each time, a torn journal line is ignored and cut off, and a
 * journal left from before a flush is not replayed twice.
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import json, { jsonStorePath } from "../../src/storage/adapters/json.ts";
import sqljs, { sqljsStorePath } from "../../src/storage/adapters/sqljs.ts";
import type { AdapterFactory } from "../../src/storage/contract.ts";
import { BUN, ROOT, tempHome } from "../_helpers.ts";

const meta = (id: string) => ({
  id,
  title: id,
  projectPath: "/p",
  status: "idle",
  createdAt: 1,
  updatedAt: 1,
  turnCount: 0,
  messageCount: 0,
});
const msg = (id: string) => ({ id, role: "user", parts: [{ type: "text", content: id }], timestamp: 2 });

/** Run `body` in a fresh Bun process with `a` = the adapter opened on `home`. */
function worker(adapter: string, home: string, body: string) {
  const code = `import f from ${JSON.stringify(`${ROOT}/src/storage/adapters/${adapter}.ts`)};
const a = f({ home: ${JSON.stringify(home)} });
${body}`;
  return Bun.spawn([BUN, "-e", code], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
}

const cases: [string, AdapterFactory, (home: string) => string][] = [
  ["sqljs", sqljs, sqljsStorePath],
  ["json", json, jsonStorePath],
];

describe.each(cases)("%s image persistence", (name, factory, pathOf) => {
  test("two processes appending at once lose nothing and never reuse a seq", async () => {
    await using home = await tempHome();
    const store = factory({ home: home.path });
    await store.createSession(meta("shared") as never, []);
    await store.close();
    const body = (tag: string) => `
      for (let i = 0; i < 150; i++) {
        await a.appendMessages("shared", [{ id: "${tag}" + i, role: "user", parts: [], timestamp: 3 }]);
        await a.appendEvents("shared", [{ type: "turn.started", turnId: "${tag}" + i }]);
        await a.updateMeta("shared", (m) => ({ ...m, tags: [...(m.tags ?? []), "${tag}" + i] }));
      }
      await a.close();`;
    const procs = [worker(name, home.path, body("x")), worker(name, home.path, body("y"))];
    for (const p of procs) {
      const code = await p.exited;
      if (code !== 0) throw new Error(await new Response(p.stderr).text());
    }
    const after = factory({ home: home.path });
    const { messages } = await after.readMessages("shared");
    expect(messages).toHaveLength(300);
    const seqs: number[] = [];
    for await (const r of after.readEvents("shared")) seqs.push(r.event!.seq);
    expect(seqs).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    const m = await after.getMeta("shared");
    expect(m?.messageCount).toBe(300);
    expect(m?.tags).toHaveLength(300); // read-modify-write under the lock: no lost update
    await after.close();
  }, 60_000);

  test("an acknowledged append survives SIGKILL (the journal holds it)", async () => {
    await using home = await tempHome();
    const p = worker(
      name,
      home.path,
      `await a.createSession(${JSON.stringify(meta("k"))}, [${JSON.stringify(msg("m1"))}]);
       console.log("acked"); await Bun.sleep(60_000);`,
    );
    const reader = p.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("acked");
    p.kill("SIGKILL");
    await p.exited;
    const store = factory({ home: home.path });
    expect((await store.readMessages("k")).messages.map((m) => m.id)).toEqual(["m1"]);
    await store.close();
  }, 30_000);

  test("single appends do not rewrite the image each time", async () => {
    await using home = await tempHome();
    const store = factory({ home: home.path });
    await store.createSession(meta("s") as never, []);
    const inodes = new Set<number>();
    for (let i = 0; i < 200; i++) {
      await store.appendMessages("s", [msg(`m${i}`)] as never);
      if (existsSync(pathOf(home.path))) inodes.add(statSync(pathOf(home.path)).ino);
    }
    expect(inodes.size).toBeLessThanOrEqual(1);
    await store.close();
    const reopened = factory({ home: home.path });
    expect((await reopened.readMessages("s")).messages).toHaveLength(200);
    await reopened.close();
  });

  test("a torn journal line is ignored, then cut off by the next writer", async () => {
    await using home = await tempHome();
    const store = factory({ home: home.path });
    await store.createSession(meta("s") as never, [msg("m1")] as never);
    await store.close(); // folds the journal into the image
    const journal = `${pathOf(home.path)}.journal`;
    appendFileSync(journal, '[["half a wri');
    const again = factory({ home: home.path });
    expect((await again.readMessages("s")).messages).toHaveLength(1);
    await again.appendMessages("s", [msg("m2")] as never);
    expect(readFileSync(journal, "utf8")).not.toContain("half a wri");
    await again.close();
    const third = factory({ home: home.path });
    expect((await third.readMessages("s")).messages.map((m) => m.id)).toEqual(["m1", "m2"]);
    await third.close();
  });

  test("a journal left from before the last flush is not replayed twice", async () => {
    await using home = await tempHome();
    const journal = `${pathOf(home.path)}.journal`;
    const store = factory({ home: home.path });
    await store.createSession(meta("s") as never, [msg("m1")] as never);
    await store.appendMessages("s", [msg("m2")] as never);
    const beforeFlush = readFileSync(journal);
    await store.close(); // image generation moves on, journal reset
    writeFileSync(journal, beforeFlush); // as if we crashed between the image rename and the journal reset
    const again = factory({ home: home.path });
    expect((await again.readMessages("s")).messages.map((m) => m.id)).toEqual(["m1", "m2"]);
    await again.appendMessages("s", [msg("m3")] as never);
    await again.close();
    const third = factory({ home: home.path });
    expect((await third.readMessages("s")).messages.map((m) => m.id)).toEqual(["m1", "m2", "m3"]);
    await third.close();
  });
});
