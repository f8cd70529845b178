/**
 * The JSON-RPC 2.0 dispatcher on its own (text in, text out), against a small method table: every
 * edge of the protocol — parse errors, invalid requests, unknown methods, params checked by name,
 * batches with notifications, empty batches, ids echoed exactly, and errors that never leak a
 * stack trace.
 */
import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { FreecodeError, notFound } from "../../src/errors.ts";
import { createRpcDispatcher, MAX_BATCH_REQUESTS, rpcMethod } from "../../src/serve/rpc.ts";

const calls: string[] = [];
const internal: [unknown, string][] = [];
const dispatch = createRpcDispatcher(
  {
    echo: rpcMethod(
      v.strictObject({ text: v.string(), times: v.optional(v.number()) }),
      async ({ text, times }) => {
        calls.push(text);
        return text.repeat(times ?? 1);
      },
    ),
    nothing: rpcMethod(v.strictObject({}), async () => undefined),
    missing: rpcMethod(v.strictObject({ id: v.string() }), async ({ id }) => {
      throw notFound(`no session ${id}`);
    }),
    locked: rpcMethod(v.object({}), async () => {
      throw new FreecodeError("locked", "line one\nline two", { source: { file: "f.json", field: "x" } });
    }),
    crash: rpcMethod(v.object({}), async () => {
      throw new Error("secret /home/me/.freecode detail");
    }),
    bigint: rpcMethod(v.object({}), async () => ({ n: 1n })),
  },
  { onInternalError: (error, method) => internal.push([error, method]) },
);

const call = async (message: unknown) => {
  const text = await dispatch(typeof message === "string" ? message : JSON.stringify(message));
  return text === undefined ? undefined : JSON.parse(text);
};
const req = (method: string, params?: unknown, id: unknown = 1) => ({
  jsonrpc: "2.0",
  method,
  ...(params === undefined ? {} : { params }),
  id,
});
/** A notification: no `id` member at all. */
const note = (method: string, params?: unknown) => {
  const { id: _, ...rest } = req(method, params);
  return rest;
};

describe("JSON-RPC dispatcher", () => {
  test("a request gets its result with the id echoed exactly (string, number, null)", async () => {
    for (const id of ["abc", "", "ünï ✓", 0, -3, 1.5, 2 ** 53, null]) {
      expect(await call(req("echo", { text: "hi", times: 2 }, id))).toEqual({
        jsonrpc: "2.0",
        id,
        result: "hihi",
      });
    }
    // A method that returns nothing answers null (a result member is required).
    expect(await call(req("nothing", {}))).toEqual({ jsonrpc: "2.0", id: 1, result: null });
    // Params may be left out when none are required.
    expect(await call(req("nothing"))).toEqual({ jsonrpc: "2.0", id: 1, result: null });
  });

  test("text that is not JSON is a parse error (-32700, id null)", async () => {
    for (const text of ["{", "", '{"jsonrpc":"2.0",', "[1,]"]) {
      const r = await call(text);
      expect(r).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
      expect(r.error.message).toStartWith("parse error");
    }
  });

  test("what is not a request object is an invalid request (-32600)", async () => {
    const cases: [unknown, unknown][] = [
      [1, null],
      ['"echo"', null], // the JSON string "echo"
      [{ jsonrpc: "1.0", method: "echo", id: 7 }, 7],
      [{ method: "echo", id: 7 }, 7],
      [{ jsonrpc: "2.0", id: 7 }, 7],
      [{ jsonrpc: "2.0", method: 5, id: 7 }, 7],
      [{ jsonrpc: "2.0", method: "echo", params: "x", id: 7 }, 7],
      [{ jsonrpc: "2.0", method: "echo", params: null, id: 7 }, 7],
      // An id that is neither string, number nor null cannot be echoed.
      [{ jsonrpc: "2.0", method: "echo", id: { a: 1 } }, null],
      [{ jsonrpc: "2.0", method: "echo", id: [1] }, null],
      [{ jsonrpc: "2.0", method: "echo", id: true }, null],
    ];
    for (const [message, id] of cases) {
      const r = await call(message);
      expect(r, JSON.stringify(message)).toMatchObject({ jsonrpc: "2.0", id, error: { code: -32600 } });
    }
  });

  test("an unknown method is -32601, including the names every object inherits", async () => {
    for (const method of ["nope", "toString", "__proto__", "constructor", "hasOwnProperty"]) {
      expect(await call(req(method, {}, "x"))).toEqual({
        jsonrpc: "2.0",
        id: "x",
        error: { code: -32601, message: `method not found: ${method}` },
      });
    }
  });

  test("invalid params are -32602 naming the field (valibot), by name only", async () => {
    const cases: [unknown, string, string | undefined][] = [
      [{}, 'invalid params: missing field "text" (field text)', "text"],
      [{ text: 5 }, "invalid params: Invalid type: Expected string but received 5 (field text)", "text"],
      [
        { text: "a", time: 2 },
        'invalid params: unknown field "time" (did you mean times?) (field time)',
        "time",
      ],
      [["a"], "invalid params: params must be an object (by name)", undefined],
      // A misspelt required field: named as the misspelling, not as the missing one.
      [{ txet: "a" }, 'invalid params: unknown field "txet" (did you mean text?) (field txet)', "txet"],
    ];
    for (const [params, message, field] of cases) {
      expect(await call(req("echo", params))).toEqual({
        jsonrpc: "2.0",
        id: 1,
        error: { code: -32602, message, ...(field ? { data: { field } } : {}) },
      });
    }
  });

  test("a FreecodeError is -32000 with its code, exit code and one-line message", async () => {
    expect(await call(req("missing", { id: "s1" }))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32000, message: "no session s1", data: { code: "not_found", exit: 3 } },
    });
    expect((await call(req("locked"))).error).toEqual({
      code: -32000,
      message: "f.json: line one | line two (field x)",
      data: { code: "locked", exit: 4 },
    });
  });

  test("an unexpected exception is -32603 with no detail; the server's hook gets it", async () => {
    internal.length = 0;
    const text = await dispatch(JSON.stringify(req("crash", {}, 9)));
    expect(JSON.parse(text!)).toEqual({
      jsonrpc: "2.0",
      id: 9,
      error: { code: -32603, message: "internal error" },
    });
    expect(text).not.toContain("secret");
    expect(text).not.toContain(" at ");
    // A result JSON cannot carry is the same.
    expect((await call(req("bigint", {}, 10))).error).toEqual({ code: -32603, message: "internal error" });
    expect(internal.map(([e, m]) => [(e as Error).message.split(" ")[0], m])).toEqual([
      ["secret", "crash"],
      [expect.any(String), "bigint"],
    ]);
  });

  test("notifications (no id) get no answer, whatever happens to them", async () => {
    calls.length = 0;
    expect(await dispatch(JSON.stringify(note("echo", { text: "n" })))).toBeUndefined();
    expect(calls).toEqual(["n"]);
    for (const [m, p] of [
      ["nope", {}],
      ["echo", { bad: 1 }],
      ["missing", { id: "x" }],
      ["crash", {}],
    ] as const)
      expect(await dispatch(JSON.stringify(note(m, p)))).toBeUndefined();
  });

  test("a batch answers its requests in order and leaves out its notifications", async () => {
    calls.length = 0;
    const r = await call([
      req("echo", { text: "a" }, "first"),
      note("echo", { text: "b" }),
      req("nope", {}, 2),
      1,
      note("echo", { text: "c" }),
      req("echo", { text: 5 }, null),
      req("echo", { text: "d" }, 3),
    ]);
    expect(calls).toEqual(["a", "b", "c", "d"]);
    expect(r).toEqual([
      { jsonrpc: "2.0", id: "first", result: "a" },
      { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "method not found: nope" } },
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.any(String) } },
      { jsonrpc: "2.0", id: null, error: expect.objectContaining({ code: -32602 }) },
      { jsonrpc: "2.0", id: 3, result: "d" },
    ]);
  });

  test("a batch of only notifications gets no answer; an empty batch is one invalid request", async () => {
    expect(
      await dispatch(JSON.stringify([note("echo", { text: "x" }), note("nothing", {})])),
    ).toBeUndefined();
    expect(await call([])).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "invalid request: empty batch" },
    });
    // A batch of invalid requests answers each one.
    expect(await call([1, 2])).toEqual([
      expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600 }) }),
      expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600 }) }),
    ]);
  });
});

describe("a batch is bounded", () => {
  test("more than MAX_BATCH_REQUESTS requests is an invalid request; nothing runs", async () => {
    calls.length = 0;
    const batch = Array.from({ length: MAX_BATCH_REQUESTS + 1 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i,
      method: "echo",
      params: { text: "x" },
    }));
    const answer = await call(batch);
    expect(answer.error.code).toBe(-32600);
    expect(answer.error.message).toContain(`at most ${MAX_BATCH_REQUESTS} requests`);
    expect(calls).toEqual([]);
  });

  test("once the answers pass the limit, the rest is not run and says to send it alone", async () => {
    const small = createRpcDispatcher(
      {
        big: rpcMethod(v.strictObject({ n: v.number() }), async ({ n }) => {
          calls.push(`big ${n}`);
          return "z".repeat(1_000);
        }),
      },
      { maxBatchAnswer: 2_500 },
    );
    calls.length = 0;
    const batch = [0, 1, 2, 3, 4].map((n) => ({ jsonrpc: "2.0", id: n, method: "big", params: { n } }));
    batch.splice(4, 0, { jsonrpc: "2.0", method: "big", params: { n: 9 } } as never); // a notification
    const answers = JSON.parse((await small(JSON.stringify(batch)))!);
    expect(calls).toEqual(["big 0", "big 1", "big 2"]);
    expect(answers.map((a: { id: number; result?: string }) => [a.id, a.result?.length])).toEqual([
      [0, 1000],
      [1, 1000],
      [2, 1000],
      [3, undefined],
      [4, undefined],
    ]);
    expect(answers[3].error).toMatchObject({ code: -32000, data: { code: "bad_input", exit: 2 } });
    expect(answers[3].error.message).toContain("send this request alone");
  });
});
