/**
 * One session of the files adapter: `meta.json` + `messages.jsonl` under the session's lease.
 * Appends write one line per message straight to the log; the meta's counters are updated in
 * memory and written back when the lease ends, together with `messagesBytes` (how much of the log
 * they count). A writer that crashed before writing the meta back leaves counters behind the log:
 * whoever reads the meta next folds the missing tail in, so the counters are never wrong for long.
 * A replace writes the meta without `messagesBytes` before renaming the new log in, so no crash
 * point leaves an old cursor to be applied to a new log: a meta without one is recounted.
 */
import { readFileSync } from "node:fs";
import { badInput, conflict, FreecodeError, notFound } from "../../errors.ts";
import { writeFileAtomic } from "../../util/atomic.ts";
import { lines } from "../../util/lines.ts";
import { type AppendOptions, refuseGivenIds, wantsIdCheck } from "../_given-ids.ts";
import { checkUsageRule, foldMessagesIntoMeta, metaAfterReplace } from "../_meta-fold.ts";
import { checkMessages, checkMeta } from "../_validate.ts";
import type { SessionMeta, StoredMessage } from "../records.ts";
import { withJsonLines } from "./_files-encode.ts";
import { holdLease, type LeaseOwner, releaseLease } from "./_files-lease.ts";
import { AppendLog, type FsyncMode } from "./_files-log.ts";
import { messageIdsIn, tryParseMessage } from "./_files-messages.ts";
import type { SessionFiles } from "./_files-paths.ts";

/** meta.json as stored: the meta plus the files adapter's own bookkeeping. */
type MetaOnDisk = SessionMeta & { messagesBytes?: number };

/** Read `meta.json` (validated) and strip the bookkeeping; undefined when absent. */
export function readMetaFile(path: string): { meta: SessionMeta; messagesBytes: number } | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (e.code === "ENOENT") return undefined;
    // A directory in its place is a meta that does not read, as a damaged one is (left out and
    // named by listings, search and reindex): the runtime's EISDIR named no file, and stopped them.
    if (e.code === "EISDIR") throw badInput("meta.json is a directory, not a file", { file: path }, error);
    e.path ??= path;
    throw error;
  }
  let raw: MetaOnDisk;
  try {
    raw = JSON.parse(text) as MetaOnDisk;
  } catch (error) {
    throw badInput(`meta.json is not JSON: ${(error as Error).message}`, { file: path }, error);
  }
  const { messagesBytes, ...meta } = raw;
  let checked: SessionMeta;
  try {
    checked = checkMeta(meta);
  } catch (error) {
    // The schema names the field; the file is ours to name.
    if (!(error instanceof FreecodeError)) throw error;
    throw badInput(error.message, { ...error.source, file: path }, error);
  }
  return { meta: checked, messagesBytes: typeof messagesBytes === "number" ? messagesBytes : -1 };
}

/**
 * Fold the messages stored past `fromByte` into `meta` (crash recovery of the counters). Synchronous:
 * the listing index heals its rows inside a transaction as well (`_files-index.ts`).
 *
 * A log shorter than the cursor lost messages the meta counted (a file cut or deleted by something
 * else, appends lost to a power cut under `fsync: never`): nothing freecode does shortens a log
 * below it. The counters are then left as they are, so the loss shows — `store verify` reports the
 * meta's count against the log's (`--repair` recounts), and `gc` does not take the session for an
 * empty one — where recounting would have hidden it.
 */
export function healCounters(meta: SessionMeta, file: string, fromByte: number, size: number): SessionMeta {
  if (fromByte === size || fromByte > size) return meta;
  // Unknown cursor (a replace under way or cut off): count the whole log again (history counters are kept).
  const known = fromByte >= 0;
  const tail: StoredMessage[] = [];
  let count = 0;
  if (size > 0) {
    for (const line of lines(file, { fromOffset: known ? fromByte : 0, toOffset: size })) {
      const m = line.torn ? undefined : tryParseMessage(line.text);
      if (!m) continue;
      count++;
      if (known) tail.push(m);
    }
  }
  return known ? foldMessagesIntoMeta(meta, tail) : { ...meta, messageCount: count };
}

export interface SessionContext {
  fsync: FsyncMode;
  lockPath: string;
  /** Tell the listing index that this session's meta changed. */
  journal(id: string, dir: string): void;
}

export class FilesSession implements LeaseOwner {
  private meta: SessionMeta | undefined;
  private metaDirty = false;
  readonly log: AppendLog;

  constructor(
    readonly id: string,
    readonly files: SessionFiles,
    private readonly ctx: SessionContext,
  ) {
    this.log = new AppendLog(files.messages, ctx.fsync);
  }

  /** Take (or keep) the lease and return the authoritative meta. */
  async hold(): Promise<SessionMeta> {
    if (holdLease(this.ctx.lockPath, this) || !this.meta) {
      const read = readMetaFile(this.files.meta);
      if (!read) throw notFound(`no session ${this.id}`);
      this.log.reload(true);
      this.meta = healCounters(read.meta, this.files.messages, read.messagesBytes, this.log.size);
      this.metaDirty = read.messagesBytes !== this.log.size;
    }
    return this.meta!;
  }

  /** Run `fn` holding the session's lock with nothing cached (create, purge): no write-back after. */
  exclusive(fn: () => void): void {
    releaseLease(this.ctx.lockPath);
    holdLease(this.ctx.lockPath, { flush() {}, forget() {} });
    try {
      fn();
    } finally {
      releaseLease(this.ctx.lockPath);
    }
  }

  /**
   * The ids of the log's messages, for appends of given ids: kept between them, and read on from
   * where the last look stopped (another process's appends), or whole again when the log was
   * replaced (a compaction renames a new one in) or cut. Read whole on every such append, building
   * a session of 8,000 messages one given id at a time took 58 s (quadratic). Called under the
   * lease, after its reload cut any torn tail: the bytes read are whole lines.
   */
  private ids?: { ino: number; size: number; set: Set<string> };

  private heldIds(): Set<string> {
    const { inode: ino, size } = this.log;
    let ids = this.ids;
    if (!ids || ids.ino !== ino || size < ids.size) ids = this.ids = { ino, size: 0, set: new Set() };
    if (size > ids.size) {
      for (const id of messageIdsIn(this.files.messages, ids.size, size)) ids.set.add(id);
      ids.size = size;
    }
    return ids.set;
  }

  /** The meta if this process holds the lease (it may be ahead of meta.json). */
  cachedMeta(): SessionMeta | undefined {
    return this.meta;
  }

  async append(messages: StoredMessage[], options?: AppendOptions): Promise<void> {
    const meta = await this.hold();
    const msgs = checkMessages(messages);
    // Under the lease: what another process appended before it is in the file now.
    if (wantsIdCheck(options)) refuseGivenIds(this.id, this.heldIds(), msgs, options);
    checkUsageRule(meta, msgs);
    const before = this.log.size;
    // `checkMessages` refused any message whose line is over the limit, in every adapter.
    withJsonLines(msgs, (bytes) => this.log.append(bytes));
    if (this.ids && this.ids.size === before && this.ids.ino === this.log.inode) {
      for (const m of msgs) this.ids.set.add(m.id);
      this.ids.size = this.log.size;
    }
    this.meta = foldMessagesIntoMeta(meta, msgs);
    this.metaDirty = true;
  }

  async replace(messages: StoredMessage[], ifMessageCount?: number): Promise<void> {
    const meta = await this.hold();
    if (ifMessageCount !== undefined && ifMessageCount !== meta.messageCount) {
      throw conflict(`session ${this.id} changed while it was being rewritten`);
    }
    const msgs = checkMessages(messages);
    const next = metaAfterReplace(meta, msgs);
    // The meta goes first, without a cursor: a crash after the new log is renamed in must not leave
    // the old `messagesBytes` to be applied to the new file. With none, whoever reads the meta next
    // counts whichever log it finds, old or new.
    this.meta = { ...meta, updatedAt: next.updatedAt };
    this.writeMeta(false);
    try {
      const fsync = this.ctx.fsync !== "never";
      withJsonLines(msgs, (bytes) => writeFileAtomic(this.files.messages, bytes, { fsync }));
    } catch (error) {
      // The old log stays: so do its meta and cursor, written back when the lease ends.
      this.meta = meta;
      this.metaDirty = true;
      throw error;
    }
    this.log.reload(true);
    this.meta = next;
    this.writeMeta();
  }

  async update(fn: (meta: SessionMeta) => SessionMeta): Promise<SessionMeta> {
    const meta = await this.hold();
    const next = checkMeta(fn(structuredClone(meta)));
    this.meta = { ...next, id: this.id };
    this.writeMeta();
    return structuredClone(this.meta);
  }

  /**
   * Write the cached meta back (atomic) and journal it for the index; with `cursor` false, without
   * `messagesBytes` (the log is about to be replaced: a reader recounts it).
   */
  writeMeta(cursor = true): void {
    if (!this.meta) return;
    const onDisk: MetaOnDisk = cursor ? { ...this.meta, messagesBytes: this.log.size } : this.meta;
    writeFileAtomic(this.files.meta, `${JSON.stringify(onDisk, null, 2)}\n`, {
      fsync: this.ctx.fsync !== "never",
    });
    this.metaDirty = false;
    this.ctx.journal(this.id, this.files.dir);
  }

  flush(): void {
    if (this.metaDirty) this.writeMeta();
  }

  forget(): void {
    this.meta = undefined;
    this.metaDirty = false;
  }
}
