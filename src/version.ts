import pkg from "../package.json" with { type: "json" };

/** The freecode version, from package.json (bundled into the binary at build time). */
export const VERSION: string = pkg.version;
