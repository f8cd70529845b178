/**
 * Snapshots of a stored session: its project is the meta's `projectPath`, and `checkpoint.*` events
 * go straight into its rollout log through the store (what the CLI uses; an agent with a live
 * recorder passes `recorder.record` to `createSnapshots` instead).
 */
import { badInput, notFound } from "../errors.ts";
import { newEventId } from "../rollout/ids.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { EventDraft } from "../storage/records.ts";
import { createSnapshots } from "./snapshots.ts";
import type { Snapshots, SnapshotsOptions } from "./types.ts";

export interface SessionSnapshotsOptions extends Pick<SnapshotsOptions, "maxFileBytes" | "git"> {
  /** Append `checkpoint.*` to the session's rollout (the CLI passes `rolloutEnabled()`). */
  rollout: boolean;
}

/** The snapshots of session `sessionId` in `store`; `not_found` when the session is unknown. */
export async function sessionSnapshots(
  store: StorageAdapter,
  home: string,
  sessionId: string,
  options: SessionSnapshotsOptions,
): Promise<Snapshots> {
  const meta = await store.getMeta(sessionId);
  if (!meta) throw notFound(`no session ${sessionId}`);
  if (!meta.projectPath) throw badInput(`session ${sessionId} has no projectPath: no work tree to snapshot`);
  return createSnapshots({
    home,
    projectPath: meta.projectPath,
    sessionId,
    ...(options.maxFileBytes === undefined ? {} : { maxFileBytes: options.maxFileBytes }),
    ...(options.git === undefined ? {} : { git: options.git }),
    record: options.rollout
      ? (event) =>
          store.appendEvents(sessionId, [
            { ...event, id: newEventId(), timestamp: Date.now() } as unknown as EventDraft,
          ])
      : undefined,
  });
}
