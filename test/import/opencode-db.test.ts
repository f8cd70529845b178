/**
 * OpenCode's SQLite store (`opencode.db`). Given a real database built from the corpus's verbatim
 * rows (the tables and columns of OpenCode 1.17, plus `account` and `credential` as views that fail
 * when read), when it is imported, then it gives the same sessions, messages and events as the row
 * dump of the same data, without touching the credential tables; a second import reads again only
 * the session whose `time_updated` moved; and a `parent_id` links a child session to its parent.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { importSources } from "../../src/import/import.ts";
import { openStore } from "../../src/storage/select.ts";
import { tempDir, tempHome } from "../_helpers.ts";
import { buildOpencodeDb, OPENCODE_ROWS as ROWS, opencodeRows as rowsOf } from "./_opencode-db.ts";
import { sessionsIn } from "./_store.ts";

async function importInto(home: string, path: string) {
  const { adapter } = await openStore("files", { home, fsync: "never" });
  try {
    const report = await importSources({ agent: "opencode", paths: [path], adapter, home, fsync: false });
    return { sessions: await sessionsIn(adapter), summary: report.sources[0]! };
  } finally {
    await adapter.close();
  }
}

describe("opencode.db", () => {
  test("imports as the row dump does, and never reads the credential tables", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "opencode.db");
    buildOpencodeDb(file);
    // The trap works: reading a credential table fails.
    const check = new Database(file, { readonly: true });
    expect(() => check.query("SELECT * FROM credential").all()).toThrow(/never_read_this/);
    check.close();

    await using a = await tempHome();
    await using b = await tempHome();
    const fromDb = await importInto(a.path, file);
    const fromRows = await importInto(b.path, ROWS);
    expect(fromDb.summary.warnings).toEqual([]);
    expect(fromDb.summary.sessions).toEqual({ created: 3, updated: 0, unchanged: 0 });
    expect(fromDb.summary.entries).toEqual(fromRows.summary.entries);
    expect(fromDb.sessions.map((s) => s.meta.id)).toEqual(fromRows.sessions.map((s) => s.meta.id));
    for (let i = 0; i < fromRows.sessions.length; i++) {
      const [x, y] = [fromDb.sessions[i]!, fromRows.sessions[i]!];
      expect(x.messages).toEqual(y.messages);
      expect(x.events).toEqual(y.events);
      const { source: sx, ...mx } = x.meta;
      const { source: sy, ...my } = y.meta;
      expect(mx).toEqual(my);
      expect(sx?.path).toBe(file);
    }
  });

  test("a second import reads again only the session whose time_updated moved", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "opencode.db");
    buildOpencodeDb(file);
    await using home = await tempHome();
    const first = await importInto(home.path, file);
    const again = await importInto(home.path, file);
    expect(again.summary.files).toEqual({ found: 1, read: 0, unchanged: 1, open: 0, skipped: 0, failed: 0 });
    expect(again.sessions).toEqual(first.sessions);

    // The user goes on in one session: a new prompt, and the session's time_updated moves.
    const [session] = rowsOf("session");
    const sid = String(session!.id);
    const at = Number(session!.time_updated) + 60_000;
    const db = new Database(file);
    db.run("UPDATE session SET time_updated = ? WHERE id = ?", [at, sid]);
    db.run("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)", [
      "msg_zzzzzzzzzzzzzzzzzzzzzzzzzz",
      sid,
      at,
      at,
      JSON.stringify({ role: "user", time: { created: at }, agent: "build" }),
    ]);
    db.run(
      "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
      [
        "prt_zzzzzzzzzzzzzzzzzzzzzzzzzz",
        "msg_zzzzzzzzzzzzzzzzzzzzzzzzzz",
        sid,
        at,
        at,
        JSON.stringify({ type: "text", text: "and one more thing" }),
      ],
    );
    db.close();

    const grown = await importInto(home.path, file);
    expect(grown.summary.files).toEqual({ found: 1, read: 1, unchanged: 0, open: 0, skipped: 0, failed: 0 });
    expect(grown.summary.sessions).toEqual({ created: 0, updated: 1, unchanged: 2 });
    const changed = grown.sessions.filter((s, i) => JSON.stringify(s) !== JSON.stringify(first.sessions[i]));
    expect(changed.map((s) => s.meta.source?.id)).toEqual([sid]);
    const last = changed[0]!.messages.at(-1)!;
    expect(last.role).toBe("user");
    expect(last.parts).toEqual([{ type: "text", content: "and one more thing" }]);
  });

  test("regression: a session at work is read again though its time_updated did not move — OpenCode writes a response's last parts after it, and an import in between never read them", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "opencode.db");
    buildOpencodeDb(file);
    // The rows as if written a few seconds ago, the session's last parts not yet in.
    const sid = "ses_1279fce82ffeZOJhNwml1w1Fu4";
    const stamp = Number(rowsOf("session").find((r) => r.id === sid)!.time_updated);
    const shift = Date.now() - 3_000 - stamp;
    const db = new Database(file);
    for (const table of ["session", "message", "part"])
      db.run(`UPDATE ${table} SET time_created = time_created + ?, time_updated = time_updated + ?`, [
        shift,
        shift,
      ]);
    const late = db
      .query("SELECT * FROM part WHERE session_id = ? AND time_created > ?")
      .all(sid, stamp + shift + 500) as Record<string, unknown>[];
    expect(late.length).toBeGreaterThan(0);
    db.run("DELETE FROM part WHERE session_id = ? AND time_created > ?", [sid, stamp + shift + 500]);
    db.close();
    await using home = await tempHome();
    await importInto(home.path, file);
    // The parts come; the session's time_updated stays where it was.
    const again = new Database(file);
    const cols = Object.keys(late[0]!);
    const insert = again.prepare(
      `INSERT INTO part (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
    );
    for (const r of late) insert.run(...cols.map((c) => r[c] as string | number | null));
    again.close();
    const grown = await importInto(home.path, file);
    await using once = await tempHome();
    const whole = await importInto(once.path, file);
    const mine = (r: typeof whole) => r.sessions.find((x) => x.meta.source?.id === sid)!;
    expect(mine(grown).messages).toEqual(mine(whole).messages);
    expect(mine(grown).events).toEqual(mine(whole).events);
  });

  test("a session's parent_id (a task subagent) links the child to its parent", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "opencode.db");
    buildOpencodeDb(file);
    const [parent, child] = rowsOf("session").map((r) => String(r.id));
    const db = new Database(file);
    db.run("UPDATE session SET parent_id = ? WHERE id = ?", [parent!, child!]);
    db.close();
    await using home = await tempHome();
    const { sessions } = await importInto(home.path, file);
    const byOcId = new Map(sessions.map((s) => [s.meta.source?.id, s.meta]));
    expect(byOcId.get(child)?.parentId).toBe(byOcId.get(parent)?.id);
    expect(sessions.filter((s) => s.meta.parentId !== undefined).length).toBe(1);
  });
});
