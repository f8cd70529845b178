/**
 * Plain objects used as dictionaries with keys from outside (ids from a transcript, entry types).
 * `obj[key]` is unsafe there: `__proto__` reads and sets the prototype (`obj.__proto__.x = …` then
 * writes to the prototype every object shares), and `constructor` or `toString` read inherited
 * functions, so a key that was never set looks present. These read and write own entries only; a
 * `__proto__` entry is an ordinary own property, which `JSON.stringify` and `JSON.parse` keep.
 */

/** The own entry `key` of `dict`, or `undefined`. */
export function own<T>(dict: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(dict, key) ? dict[key] : undefined;
}

/** Whether `dict` has an own entry `key`. */
export const has = (dict: object, key: string): boolean => Object.hasOwn(dict, key);

/** Set the own entry `key` of `dict` (a `__proto__` key included). */
export function put<T>(dict: Record<string, T>, key: string, value: T): void {
  if (key === "__proto__") {
    Object.defineProperty(dict, key, { value, writable: true, enumerable: true, configurable: true });
  } else dict[key] = value;
}

/** Remove the own entry `key` of `dict`. */
export function drop(dict: Record<string, unknown>, key: string): void {
  if (Object.hasOwn(dict, key)) delete dict[key];
}
