import type { StoreDatabase } from "../../store/database.js";
import {
  findPreviousCall,
  lockSubjectForRecording,
} from "../../store/repositories/recorded-calls.js";
import { inTransaction } from "../../store/transaction.js";
import { Pace } from "./pace.js";
import {
  placeSlice,
  startPlacing,
  type CallToPlace,
  type PlacementOptions,
  type RecordedCallResult,
  type SliceLimits,
} from "./placement.js";

/** What one transaction of a placing writes at most (wire messages, bytes of their JSON). */
export const SLICE_LIMITS: SliceLimits = { messages: 32, bytes: 128 * 1024 };

/**
 * Runs the placing of one recorded call (placement.ts) so that no other request waits
 * long for it (docs/server/recorded-calls.md, "Recorded calls"): its prefix hashes are computed and its previous
 * call looked up letting the event loop run between pieces, and its messages are placed a slice per transaction, the event
 * loop running between two. On SQLite a transaction holds the one connection and the thread
 * until it commits, so its size is what another subject's request may wait for, whatever the
 * size of the call. Resolves to undefined when the call was placed elsewhere (another process).
 */
export async function placeInSlices(
  database: StoreDatabase,
  options: PlacementOptions,
  call: CallToPlace,
  limits: SliceLimits = SLICE_LIMITS,
): Promise<RecordedCallResult | undefined> {
  const pace = new Pace();
  const hashes = await options.prefixes.prefixHashesPaced(call.format, call.messages, pace);
  // Outside the transactions and paced: a long new request is hundreds of statements.
  const previous = await findPreviousCall(database.db, call.subjectUid, hashes, () => pace.step());
  const placing = startPlacing(call, hashes, previous?.id ?? null);
  for (;;) {
    const outcome = await inTransaction(
      database,
      async (db) => {
        if (database.capabilities.advisoryLocks) await lockSubjectForRecording(db, call.subjectUid);
        return placeSlice(db, options, placing, limits);
      },
      // A placing lost with the power is made again from the call's durable row.
      { waitForDisk: false },
    );
    if (outcome === "elsewhere") return undefined;
    if (outcome !== "more") return outcome.placed;
    await pace.yield();
  }
}
