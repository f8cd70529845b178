/** A parser's saved state under `--redact`: masked whole but for its sets of id hashes (`redactState`). */
import { expect, test } from "bun:test";
import { redactState } from "../../src/import/redact-state.ts";

const KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";

test("the state is masked whole; its packed id sets and entry map are kept as they are, not scanned", () => {
  const seen = "3f9k2a,1z0y8b,7qq1c0";
  const eventIds = Array.from({ length: 1000 }, (_, i) => (i * 7919).toString(36)).join(",");
  const sidechainOf = { "a1b2c3d4-0000-4000-8000-000000000001": "claude-x.task-toolu_1" };
  const state = {
    seen,
    closed: "",
    sidechainOf,
    titles: { user: `deploy with ${KEY}` },
    main: {
      id: "claude-x",
      eventIds,
      pending: {
        toolu_1: { tool: "Bash", args: { command: `export OPENAI_API_KEY=${KEY}`, password: "hunter22x" } },
      },
    },
    children: { "claude-x.task-toolu_1": { id: "claude-x.task-toolu_1", eventIds: "abc,def" } },
  };
  const masked = redactState(state);
  const text = JSON.stringify(masked);
  expect(text).not.toContain(KEY);
  expect(text).not.toContain("hunter22x");
  expect(masked.main.pending.toolu_1.args.password).toBe("[REDACTED]");
  // The very same values: not copied through the masker.
  expect(masked.seen).toBe(seen);
  expect(masked.main.eventIds).toBe(eventIds);
  expect(masked.sidechainOf).toBe(sidechainOf);
  expect(masked.children["claude-x.task-toolu_1"].eventIds).toBe("abc,def");
  // The input is not changed.
  expect(state.titles.user).toContain(KEY);
});
