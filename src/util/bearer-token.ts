/**
 * What may be a bearer token (RFC 6750's token68: letters, digits, `-._~+/`, then `=` padding),
 * and long enough not to be guessed: a token with a space or a newline can never be sent in an
 * `Authorization` header, so the server would refuse everyone and the client fail in `fetch`.
 */

/** Shorter tokens are refused: a guessable token guards nothing. */
export const MIN_TOKEN_LENGTH = 16;

/** Whether `token` can be sent as `Authorization: Bearer <token>` and is at least 16 characters. */
export const isBearerToken = (token: string): boolean =>
  token.length >= MIN_TOKEN_LENGTH && /^[A-Za-z0-9._~+/-]+=*$/.test(token);
