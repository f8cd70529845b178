/**
 * `url` as messages show it: a password in it (`https://user:secret@host/…`, which `fetch` sends as
 * Basic credentials) shown as `***` (it was printed whole in every message naming the endpoint).
 */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = "***";
    return u.href;
  } catch {
    return url;
  }
}
