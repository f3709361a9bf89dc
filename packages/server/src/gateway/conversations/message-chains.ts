import type { Kysely } from "kysely";
import type { StoreDatabase } from "../../store/database.js";
import {
  findDeepestNode,
  insertChainNodes,
  lockSubjectForRecording,
  replaceChainNodes,
  type ChainNodeRow,
} from "../../store/repositories/recorded-calls.js";
import type { StoreSchema } from "../../store/schema.js";
import { conversationDeleted, nodeBeforeAnchor, nodeDeletion } from "./chain-deletions.js";
import {
  responseUnits,
  unitHash,
  unitPrefixHashes,
  type MatchableMessage,
} from "../recording/chain-matching.js";
import type { AppendMatcher, MatchedAnchor } from "./message-store.js";
import type { GatewayMessage } from "./message-types.js";

/**
 * One chain per session for clients that send their whole history with every request and keep
 * no server state (docs/server/recorded-calls.md, "Matching"): the Responses API without
 * `previous_response_id` or `conversation` (Codex with `store: false`, the AI SDK with
 * client-managed history). The request's input is cut into units (`responseUnits`: the items a
 * client gives back), hashed as prefixes, and the deepest prefix the subject already stored
 * names the message to continue: the input items past it are appended after that message (a
 * request that extends its chain continues it, one that diverges forks it there, a new first
 * item starts a conversation), and the answer follows them. Each stored unit is a chain node
 * (ai_gateway_chain_nodes) naming its message and the deepest message its prefix covers whole.
 *
 * Matching and the write of the inputs and their nodes are one transaction under the subject's
 * lock (SQLite's write lock, a PostgreSQL advisory lock), so concurrent requests of one session
 * never start two conversations; the answer's nodes are written once it is final.
 */
export class MessageChain implements AppendMatcher {
  readonly #subjectUid: string;
  readonly #seed: string;
  readonly #units: readonly (readonly string[])[];
  readonly #hashes: readonly string[];
  readonly #advisoryLocks: boolean;
  readonly #db: Kysely<StoreSchema>;
  #tail: ChainTail | undefined;
  /** The match named what its subject deleted: this request's nodes take over those. */
  #replaceNodes = false;

  constructor(
    database: StoreDatabase,
    subjectUid: string,
    seed: string,
    inputs: readonly MatchableMessage[],
  ) {
    this.#subjectUid = subjectUid;
    this.#seed = seed;
    this.#advisoryLocks = database.capabilities.advisoryLocks;
    this.#db = database.db;
    this.#units = inputs.map(responseUnits);
    this.#hashes = unitPrefixHashes(seed, this.#units.flat());
  }

  /** The anchor to continue and how many input messages it already holds (in the write). */
  async match(db: Kysely<StoreSchema>): Promise<MatchedAnchor> {
    if (this.#advisoryLocks) await lockSubjectForRecording(db, this.#subjectUid);
    const none: MatchedAnchor = { previousMessageId: null, storedMessages: 0 };
    let node = await findDeepestNode(db, this.#subjectUid, this.#hashes);
    while (node !== undefined) {
      const conversationId = node.conversation_id;
      const count = node.anchor_count ?? 0;
      const covered = messagesCovering(this.#units, count);
      if (covered !== undefined) {
        // What the subject deleted is not continued, as for recorded calls (chain-deletions.ts):
        // a deleted conversation is taken over by a new one; a deleted message the match ends
        // at is forked before and written again. Either way this request's nodes replace those.
        const deleted = await nodeDeletion(db, this.#subjectUid, node);
        if (deleted !== "none") {
          this.#replaceNodes = true;
          if (deleted === "conversation") return none;
          node = await nodeBeforeAnchor(db, this.#subjectUid, this.#hashes, node);
          continue;
        }
        return {
          previousMessageId: count === 0 ? null : node.anchor_message_id,
          conversationId,
          storedMessages: covered,
          coveredUnits: count,
        };
      }
      // The stored anchor ends inside one of this request's messages: continue from the
      // deepest stored prefix that ends before that message instead.
      const start = unitsBeforeSplit(this.#units, count);
      if (start === 0) {
        if (await conversationDeleted(db, this.#subjectUid, conversationId)) {
          this.#replaceNodes = true;
          return none;
        }
        return { previousMessageId: null, conversationId, storedMessages: 0 };
      }
      node = await findDeepestNode(db, this.#subjectUid, [this.#hashes[start - 1] as string]);
    }
    return none;
  }

  /** Writes the nodes of the input messages the append stored (in the write). */
  async written(
    db: Kysely<StoreSchema>,
    anchor: MatchedAnchor,
    conversationId: string,
    stored: readonly GatewayMessage[],
  ): Promise<void> {
    const now = new Date().toISOString();
    const covered = anchor.coveredUnits ?? 0;
    let state: ChainTail = {
      conversationId,
      prefixHash: covered === 0 ? null : (this.#hashes[covered - 1] ?? null),
      units: covered,
      anchorMessageId: anchor.previousMessageId,
      anchorCount: covered,
    };
    const nodes: ChainNodeRow[] = [];
    stored.forEach((message, index) => {
      const units = this.#units[anchor.storedMessages + index];
      if (units === undefined) return;
      state = this.#nodesOf(message.id, units, state, now, nodes);
    });
    await (this.#replaceNodes ? replaceChainNodes : insertChainNodes)(db, nodes);
    this.#tail = state;
  }

  /** Writes the nodes of the final answer, so the client's next request continues after it. */
  async answered(output: GatewayMessage): Promise<void> {
    const tail = this.#tail;
    if (tail === undefined) return;
    const units = responseUnits(matchable(output));
    if (units.length === 0) return;
    const nodes: ChainNodeRow[] = [];
    this.#nodesOf(output.id, units, tail, new Date().toISOString(), nodes);
    await (this.#replaceNodes ? replaceChainNodes : insertChainNodes)(this.#db, nodes);
  }

  /** The nodes of one stored message's units, after `state`; the state after the message. */
  #nodesOf(
    messageId: string,
    units: readonly string[],
    state: ChainTail,
    now: string,
    into: ChainNodeRow[],
  ): ChainTail {
    const hashes = unitPrefixHashes(this.#seed, units, state.prefixHash);
    units.forEach((unit, index) => {
      const position = state.units + index;
      const last = index === units.length - 1;
      into.push({
        subject_uid: this.#subjectUid,
        prefix_sha256: hashes[index] as string,
        conversation_id: state.conversationId,
        parent_prefix_sha256: index === 0 ? state.prefixHash : (hashes[index - 1] as string),
        position,
        message_sha256: unitHash(unit),
        created_at: now,
        message_id: messageId,
        anchor_message_id: last ? messageId : state.anchorMessageId,
        anchor_count: last ? position + 1 : state.anchorCount,
      });
    });
    return {
      conversationId: state.conversationId,
      prefixHash: hashes[hashes.length - 1] ?? state.prefixHash,
      units: state.units + units.length,
      anchorMessageId: messageId,
      anchorCount: state.units + units.length,
    };
  }
}

/** Where a chain stands after a stored message: what the next unit's node continues. */
interface ChainTail {
  readonly conversationId: string;
  /** The prefix hash of the last unit (null before the first). */
  readonly prefixHash: string | null;
  /** Units so far. */
  readonly units: number;
  readonly anchorMessageId: string | null;
  readonly anchorCount: number;
}

/** A stored message as the matching sees it. */
export function matchable(message: GatewayMessage): MatchableMessage {
  return {
    role: message.role,
    content: message.content,
    inputRole: message.metadata.gateway.inputRole,
  };
}

/** The fewest leading messages whose units number exactly `count`, or undefined. */
function messagesCovering(
  units: readonly (readonly string[])[],
  count: number,
): number | undefined {
  let total = 0;
  for (let index = 0; index <= units.length; index++) {
    if (total === count) return index;
    if (total > count) return undefined;
    total += units[index]?.length ?? 0;
  }
  return undefined;
}

/** The units before the message in which unit `count` falls. */
function unitsBeforeSplit(units: readonly (readonly string[])[], count: number): number {
  let total = 0;
  for (const message of units) {
    if (total + message.length > count) return total;
    total += message.length;
  }
  return total;
}
