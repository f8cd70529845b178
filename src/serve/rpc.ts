/**
 * A JSON-RPC 2.0 dispatcher: request text in, response text out (undefined when there is nothing
 * to answer: a notification, or a batch of only notifications). It knows the protocol — parse
 * errors, invalid requests, unknown methods, by-name params checked with the method's valibot
 * schema, batches, notifications, ids echoed as given — and nothing of HTTP or stdio, which carry
 * the text. Errors: a `FreecodeError` is an application error (-32000, its one-line message, and
 * `data: {code, exit}` with the CLI's exit code); anything else is -32603 "internal error" with no
 * detail (a stack trace is for the server's log, given to `onInternalError`, not for the caller).
 */
import * as v from "valibot";
import { ERROR_EXIT_CODES, FreecodeError } from "../errors.ts";
import { firstIssue, unknownField } from "../util/unknown-field.ts";

export const RPC_ERRORS = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** A FreecodeError: not found, conflict, bad input… (`data.code` says which). */
  applicationError: -32000,
} as const;

/** A method: its params (an object, by name) as a valibot schema, and what it does with them. */
export interface RpcMethod<S extends v.GenericSchema = v.GenericSchema> {
  params: S;
  run(params: v.InferOutput<S>): Promise<unknown>;
}

export type RpcMethods = Record<string, RpcMethod>;

/** Declare a method with its params' type inferred from the schema. */
export const rpcMethod = <S extends v.GenericSchema>(
  params: S,
  run: (params: v.InferOutput<S>) => Promise<unknown>,
): RpcMethod => ({ params, run }) as RpcMethod;

export type RpcId = string | number | null;

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

export type RpcResponse =
  | { jsonrpc: "2.0"; id: RpcId; result: unknown }
  | { jsonrpc: "2.0"; id: RpcId; error: RpcError };

export interface RpcDispatcherOptions {
  /** Called with an unexpected exception (the caller got -32603 with no detail). */
  onInternalError?: (error: unknown, method: string) => void;
  /** The most a batch's answers may add up to, in characters (default `MAX_BATCH_ANSWER`). */
  maxBatchAnswer?: number;
}

/** The most requests one batch may hold. */
export const MAX_BATCH_REQUESTS = 1_000;
/**
 * The most a batch's answers may add up to (characters of JSON). A batch repeating a read of a large
 * session asked the server for gigabytes with a request of kilobytes; past this, the batch's
 * remaining requests are not run, and each is answered with an error saying to send it alone.
 */
export const MAX_BATCH_ANSWER = 64 * 1024 * 1024;

export type RpcDispatcher = (text: string) => Promise<string | undefined>;

const failure = (id: RpcId, code: number, message: string, data?: unknown): RpcResponse => ({
  jsonrpc: "2.0",
  id,
  error: data === undefined ? { code, message } : { code, message, data },
});

const isId = (id: unknown): id is RpcId =>
  id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));

/** The text dispatcher over `methods`. Requests of a batch run one after the other, in order. */
export function createRpcDispatcher(methods: RpcMethods, options: RpcDispatcherOptions = {}): RpcDispatcher {
  const call = async (request: unknown): Promise<RpcResponse | undefined> => {
    if (typeof request !== "object" || request === null || Array.isArray(request))
      return failure(null, RPC_ERRORS.invalidRequest, "invalid request: expected a JSON-RPC request object");
    const r = request as Record<string, unknown>;
    const hasId = Object.hasOwn(r, "id");
    if (hasId && !isId(r.id))
      return failure(
        null,
        RPC_ERRORS.invalidRequest,
        "invalid request: id must be a string, a number or null",
      );
    const id = hasId ? (r.id as RpcId) : null;
    if (r.jsonrpc !== "2.0")
      return failure(id, RPC_ERRORS.invalidRequest, 'invalid request: jsonrpc must be "2.0"');
    if (typeof r.method !== "string")
      return failure(id, RPC_ERRORS.invalidRequest, "invalid request: method must be a string");
    if (r.params !== undefined && (typeof r.params !== "object" || r.params === null))
      return failure(id, RPC_ERRORS.invalidRequest, "invalid request: params must be an object or an array");
    const response = await run(r.method, r.params, id);
    return hasId ? response : undefined;
  };

  const run = async (name: string, params: unknown, id: RpcId): Promise<RpcResponse> => {
    const method = Object.hasOwn(methods, name) ? methods[name] : undefined;
    if (!method) return failure(id, RPC_ERRORS.methodNotFound, `method not found: ${name}`);
    if (Array.isArray(params))
      return failure(id, RPC_ERRORS.invalidParams, "invalid params: params must be an object (by name)");
    const parsed = v.safeParse(method.params, params ?? {});
    if (!parsed.success) {
      const issue = firstIssue(parsed.issues);
      const field = v.getDotPath(issue);
      const why = unknownField(method.params, issue) ?? issue.message;
      return failure(
        id,
        RPC_ERRORS.invalidParams,
        `invalid params: ${why}${field ? ` (field ${field})` : ""}`,
        field ? { field } : undefined,
      );
    }
    try {
      return { jsonrpc: "2.0", id, result: (await method.run(parsed.output)) ?? null };
    } catch (error) {
      if (error instanceof FreecodeError)
        return failure(id, RPC_ERRORS.applicationError, error.oneLine, {
          code: error.code,
          exit: ERROR_EXIT_CODES[error.code],
        });
      options.onInternalError?.(error, name);
      return failure(id, RPC_ERRORS.internalError, "internal error");
    }
  };

  /** The response as text; a result JSON cannot hold (a cycle, a bigint) is an internal error. */
  const text = (response: RpcResponse | undefined, method: string): string | undefined => {
    if (!response) return undefined;
    try {
      return JSON.stringify(response);
    } catch (error) {
      options.onInternalError?.(error, method);
      return JSON.stringify(failure(response.id, RPC_ERRORS.internalError, "internal error"));
    }
  };
  const methodOf = (request: unknown) => String((request as { method?: unknown } | null)?.method ?? "");

  return async (input) => {
    let message: unknown;
    try {
      message = JSON.parse(input);
    } catch (error) {
      return JSON.stringify(failure(null, RPC_ERRORS.parseError, `parse error: ${(error as Error).message}`));
    }
    if (!Array.isArray(message)) return text(await call(message), methodOf(message));
    if (message.length === 0)
      return JSON.stringify(failure(null, RPC_ERRORS.invalidRequest, "invalid request: empty batch"));
    if (message.length > MAX_BATCH_REQUESTS)
      return JSON.stringify(
        failure(
          null,
          RPC_ERRORS.invalidRequest,
          `invalid request: a batch holds at most ${MAX_BATCH_REQUESTS} requests (got ${message.length})`,
        ),
      );
    const limit = options.maxBatchAnswer ?? MAX_BATCH_ANSWER;
    const responses: string[] = [];
    let size = 0;
    for (const request of message) {
      let response: string | undefined;
      if (size > limit) {
        // Not run: answered, when it has an id, with what to do instead.
        const r = request as { id?: unknown } | null;
        if (r && typeof r === "object" && Object.hasOwn(r, "id") && isId(r.id))
          response = JSON.stringify(
            failure(
              r.id,
              RPC_ERRORS.applicationError,
              `not run: the batch's answers passed ${limit} characters; send this request alone`,
              { code: "bad_input", exit: ERROR_EXIT_CODES.bad_input },
            ),
          );
      } else response = text(await call(request), methodOf(request));
      if (response === undefined) continue;
      responses.push(response);
      size += response.length;
    }
    return responses.length > 0 ? `[${responses.join(",")}]` : undefined;
  };
}
