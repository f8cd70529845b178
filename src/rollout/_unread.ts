/**
 * Event fields some folds never read, which a file reader may leave unparsed (`util/json-skip.ts`).
 * Tool outputs are a quarter of a real log's bytes (the fold bench's real-shaped log: 24 MB of
 * 100), and neither the trace fold nor the usage fold looks at them; the replay fold does, and reads
 * them whole. Lines are recognised by how freecode writes them, `type` first; a line written in
 * another order is parsed whole.
 */
import { FieldSkip } from "../util/json-skip.ts";

export const UNREAD_OUTPUTS = new FieldSkip({ lineStart: '{"type":"function.output",', field: "output" });
