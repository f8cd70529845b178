/**
 * Byte sizes as people write them (`2GB`, `500 MiB`, `1.5g`, `4096`) and as gc prints them. With an
 * `i` the unit is binary (KiB = 1024), without it decimal (KB = 1000): the SI reading of "GB".
 */

const UNIT_POWER: Record<string, number> = { "": 0, b: 0, k: 1, m: 2, g: 3, t: 4 };

const SIZE = /^\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(i)?b?|(b))?\s*$/i;

/**
 * The number of bytes `text` names (whole bytes, rounded down), or undefined when it is not a size.
 * A number is taken as bytes.
 */
export function parseByteSize(text: string | number): number | undefined {
  if (typeof text === "number") return Number.isSafeInteger(text) && text >= 0 ? text : undefined;
  const m = SIZE.exec(text);
  if (!m) return undefined;
  const unit = (m[2] ?? m[4] ?? "").toLowerCase();
  const base = m[3] ? 1024 : 1000;
  const bytes = Math.floor(Number(m[1]) * base ** UNIT_POWER[unit]!);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** `512 B`, `1.5 KiB`, `2.0 GiB`: binary units, one decimal. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let i = 0;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i++;
  }
  return `${value.toFixed(1)} ${units[i]}`;
}
