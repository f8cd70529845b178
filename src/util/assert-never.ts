/** Exhaustiveness guard for `switch` over discriminated unions: adding a variant breaks the build. */
export function assertNever(value: never, what = "value"): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
