/** `freecode session …`: the session store from the command line (one file per subcommand). */
import { defineCommand } from "citty";

const leaf = (load: () => Promise<{ default: unknown }>) => () => load().then((m) => m.default as never);

export default defineCommand({
  meta: {
    name: "session",
    description: "List, show, create, append to, fork, resume, compact, export and import sessions",
  },
  subCommands: {
    list: leaf(() => import("./session/list.ts")),
    show: leaf(() => import("./session/show.ts")),
    create: leaf(() => import("./session/create.ts")),
    append: leaf(() => import("./session/append.ts")),
    rename: leaf(() => import("./session/rename.ts")),
    delete: leaf(() => import("./session/delete.ts")),
    restore: leaf(() => import("./session/restore.ts")),
    fork: leaf(() => import("./session/fork.ts")),
    resume: leaf(() => import("./session/resume.ts")),
    compact: leaf(() => import("./session/compact.ts")),
    export: leaf(() => import("./session/export.ts")),
    import: leaf(() => import("./session/import.ts")),
    archive: leaf(() => import("./session/archive.ts")),
    unarchive: leaf(() => import("./session/unarchive.ts")),
    pin: leaf(() => import("./session/pin.ts")),
    unpin: leaf(() => import("./session/unpin.ts")),
    title: leaf(() => import("./session/title.ts")),
    tag: leaf(() => import("./session/tag.ts")),
    snapshot: leaf(() => import("./session/snapshot.ts")),
    snapshots: leaf(() => import("./session/snapshots.ts")),
    undo: leaf(() => import("./session/undo.ts")),
    redo: leaf(() => import("./session/redo.ts")),
  },
});
