import { describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configuredStore, loadConfig, parseConfig } from "../src/config.ts";
import { FreecodeError } from "../src/errors.ts";
import { createRecorder } from "../src/rollout/recorder.ts";
import { openStore } from "../src/storage/select.ts";
import { runCli, tempHome } from "./_helpers.ts";

describe("config.json", () => {
  test("missing file is an empty config", async () => {
    await using home = await tempHome();
    expect(loadConfig(home.path)).toEqual({});
  });

  test("valid fields load", () => {
    const c = parseConfig({
      store: "sqlite",
      fsync: "always",
      hangMs: 1000,
      prices: { "gpt-*": { input: 1, output: 2 } },
    });
    expect(c.store).toBe("sqlite");
    expect(c.prices?.["gpt-*"]?.output).toBe(2);
  });

  test("an unknown field, a bad value or bad JSON is bad_input naming file and field", async () => {
    await using home = await tempHome();
    const file = join(home.path, "config.json");
    for (const [text, field] of [
      ['{"stroe":"files"}', "stroe"],
      ['{"hangMs":-5}', "hangMs"],
      ['{"prices":{"m":{"input":"cheap","output":1}}}', "prices.m.input"],
      ["{not json", undefined],
    ] as const) {
      writeFileSync(file, text);
      try {
        loadConfig(home.path);
        throw new Error("expected a failure");
      } catch (error) {
        expect(error).toBeInstanceOf(FreecodeError);
        const e = error as FreecodeError;
        expect(e.code).toBe("bad_input");
        expect(e.source?.file).toBe(file);
        expect(e.source?.field).toBe(field);
        expect(e.oneLine).not.toContain("\n");
      }
    }
  });

  test("a key written twice is refused with its line (JSON.parse kept the last one, unseen)", async () => {
    await using home = await tempHome();
    const file = join(home.path, "config.json");
    writeFileSync(file, '{\n  "store": "sqlite",\n  "fsync": "always",\n  "store": "files"\n}\n');
    let error: FreecodeError | undefined;
    try {
      loadConfig(home.path);
    } catch (e) {
      error = e as FreecodeError;
    }
    expect(error?.oneLine).toStartWith(`${file}:4: invalid config: duplicate key "store"`);
    // The same key in two objects is not a repeat.
    writeFileSync(file, '{"prices": {"a": {"input": 1, "output": 2}, "b": {"input": 1, "output": 2}}}');
    expect(loadConfig(home.path).prices?.b?.output).toBe(2);
  });
});

test("an HTTP summarizer's url must be http or https (a file: url would be read as the model's answer)", () => {
  expect(() =>
    parseConfig({ summarizer: { type: "http", url: "file:///etc/hostname", model: "m" } }),
  ).toThrow("the summarizer url must be http or https");
  expect(
    parseConfig({
      summarizer: { type: "http", url: "https://api.example.com/v1/chat/completions", model: "m" },
    }),
  ).toBeTruthy();
});

test("regression: configuredStore picks the store the CLI reads (FREECODE_STORE, else config.json, else the default), so what a library records, trace finds", async () => {
  await using home = await tempHome();
  expect(configuredStore(home.path, { env: {} })).toBeUndefined();
  writeFileSync(join(home.path, "config.json"), '{"store": "sqlite"}');
  expect(configuredStore(home.path, { env: {} })).toBe("sqlite");
  expect(configuredStore(home.path, { env: { FREECODE_STORE: "json" } })).toBe("json");
  expect(() => configuredStore(home.path, { env: { FREECODE_STORE: "mongo" } })).toThrow(
    'unknown store "mongo" in FREECODE_STORE',
  );
  // The README's recording example, with config.json naming sqlite: `trace` (which reads the
  // configured store) finds the log. With `openStore(undefined, …)` it was in the files store.
  const { adapter } = await openStore(configuredStore(home.path, { env: {} }), { home: home.path });
  const rec = createRecorder({ adapter, sessionId: "my-session", enabled: true });
  rec.record({ type: "turn.started", turnId: "turn-0" });
  await rec.end();
  await adapter.close();
  const traced = runCli(["trace", "my-session", "--json"], {
    home: home.path,
    env: { FREECODE_STORE: undefined },
  });
  expect([traced.code, JSON.parse(traced.stdout).sessionId]).toEqual([0, "my-session"]);
});

test("regression: config refuses an infinite price, a timeout no timer can wait, arrays for objects, a link to nowhere and a directory; names a misspelt key before the missing one", async () => {
  await using home = await tempHome();
  const file = join(home.path, "config.json");
  const refused = (text: string) => {
    writeFileSync(file, text);
    try {
      loadConfig(home.path);
    } catch (e) {
      return [(e as FreecodeError).code, (e as FreecodeError).oneLine.replace(`${file}: `, "")];
    }
    return ["accepted"];
  };
  expect(refused('{"prices":{"*":{"input":1e999,"output":1}}}')).toEqual([
    "bad_input",
    "invalid config: a number JSON can hold (1e999 is read as Infinity) (field prices.*.input)",
  ]);
  expect(
    refused('{"summarizer":{"type":"http","url":"http://x","model":"m","timeoutMs":1e16}}')[1],
  ).toContain("at most 2147483647 ms (a timer waits no longer) (field summarizer.timeoutMs)");
  for (const field of ["prices", "gc", "changedFileTools", "summarizer"])
    expect(refused(`{"${field}": []}`)[1]).toBe(
      `invalid config: must be a JSON object, not an array (field ${field})`,
    );
  expect(refused('{"prices":{"m":{"input":1,"outptu":2}}}')[1]).toBe(
    'invalid config: unknown field "outptu" (did you mean output?) (field prices.m.outptu)',
  );
  expect(refused('{"prices":{"m":{"input":1}}}')[1]).toBe(
    'invalid config: missing field "output" (field prices.m.output)',
  );
  expect(refused('{"gc":{"maxSessoins":3}}')[1]).toContain(
    'unknown field "maxSessoins" (did you mean maxSessions?)',
  );
  // A syntax error names its line; an editor's byte-order mark is no error; a FIFO is not read (it hung).
  writeFileSync(file, '{\n "store": "files"\n "fsync": "batch"\n}');
  expect(() => loadConfig(home.path)).toThrow(
    expect.objectContaining({ source: expect.objectContaining({ line: 3 }) }),
  );
  writeFileSync(file, '\uFEFF{"store": "files"}');
  expect(loadConfig(home.path)).toEqual({ store: "files" });
  rmSync(file);
  Bun.spawnSync(["mkfifo", file]);
  expect(() => loadConfig(home.path)).toThrow("it is not a file (a FIFO, a socket or a device)");
  rmSync(file);
  // A field another type takes is said so (it read `unknown field "url" (did you mean url?)`).
  expect(refused('{"summarizer":{"type":"builtin","url":"http://x"}}')[1]).toBe(
    'invalid config: field "url" is not taken with type "builtin" (field summarizer.url)',
  );
  expect(refused('{"titler":{"type":"off","apiKeyEnv":"X"}}')[1]).toBe(
    'invalid config: field "apiKeyEnv" is not taken with type "off" (field titler.apiKeyEnv)',
  );
  rmSync(file);
  symlinkSync(join(home.path, "nowhere.json"), file);
  expect(() => loadConfig(home.path)).toThrow(
    `it is a link to ${join(home.path, "nowhere.json")}, which leads to no file (missing, or a loop of links)`,
  );
  // A link to itself: the same.
  rmSync(file);
  symlinkSync(file, file);
  expect(() => loadConfig(home.path)).toThrow("which leads to no file (missing, or a loop of links)");
  rmSync(file);
  mkdirSync(file);
  expect(() => loadConfig(home.path)).toThrow(
    "invalid config: cannot read it: it is a directory, not a file",
  );
});
