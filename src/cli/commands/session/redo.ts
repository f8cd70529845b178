/** `freecode session redo <id> [--dry-run]`: walk forward again after an undo (see `undo.ts`). */
import { walkCommand } from "./undo.ts";

export default walkCommand("redo");
