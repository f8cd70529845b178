/**
 * The server's bearer token: taken from `FREECODE_SERVE_TOKEN`, or made up (32 random bytes,
 * base64url) when that is not set. A presented token is compared in constant time: both sides are
 * hashed to 32 bytes first, so `timingSafeEqual` gets equal lengths and even the token's length
 * does not leak through timing.
 */
import crypto from "node:crypto";

/** A new random token: 32 bytes, base64url (43 characters). */
export const newToken = (): string => crypto.randomBytes(32).toString("base64url");

const digest = (s: string) => crypto.createHash("sha256").update(s, "utf8").digest();

/** Whether `presented` is `expected`, in time that does not depend on where they differ. */
export function tokenMatches(presented: string, expected: string): boolean {
  return crypto.timingSafeEqual(digest(presented), digest(expected));
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | null): string | undefined {
  const m = header === null ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m?.[1];
}

/** Whether the request carries the right bearer token. */
export function authorized(request: Request, token: string): boolean {
  const presented = bearerToken(request.headers.get("authorization"));
  // Compared even when absent, so a missing header takes as long as a wrong one.
  return tokenMatches(presented ?? "", token) && presented !== undefined;
}
