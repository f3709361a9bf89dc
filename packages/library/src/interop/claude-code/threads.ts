import type { SourceLine } from "../jsonl.js";
import {
  agentIdOf,
  isMessageLine,
  isSidechain,
  lineType,
  logicalParentOf,
  messageIdOf,
  parentOf,
  toolResultIdsOnly,
  toolUseIds,
  uuidOf,
} from "./lines.js";

/** The lines of one conversation of a session file: the main agent's, or one sub-agent's. */
export interface Thread {
  /** Undefined for the main agent. */
  readonly agentId: string | undefined;
  readonly lines: readonly SourceLine[];
}

/**
 * Splits a session file into threads. A sub-agent file (`agent-*.jsonl`) is one thread; in a
 * main session file, `isSidechain` lines (the 1.x layout) go to a thread per sub-agent, by
 * `agentId` or else by the root of their parent chain, never into the main agent's thread.
 */
export function splitThreads(lines: readonly SourceLine[], agentFileId?: string): Thread[] {
  if (agentFileId !== undefined) return [{ agentId: agentFileId, lines }];
  const main: SourceLine[] = [];
  const sidechains = new Map<string, SourceLine[]>();
  const sideByUuid = new Map<string, SourceLine>();
  for (const line of lines) {
    const uuid = uuidOf(line);
    if (isSidechain(line) && uuid !== undefined) sideByUuid.set(uuid, line);
  }
  for (const line of lines) {
    if (!isSidechain(line)) {
      main.push(line);
      continue;
    }
    const key = agentIdOf(line) ?? rootOf(line, sideByUuid);
    let list = sidechains.get(key);
    if (list === undefined) {
      list = [];
      sidechains.set(key, list);
    }
    list.push(line);
  }
  return [
    { agentId: undefined, lines: main },
    ...[...sidechains].map(([agentId, list]) => ({ agentId, lines: list })),
  ];
}

function rootOf(line: SourceLine, byUuid: ReadonlyMap<string, SourceLine>): string {
  let current = line;
  const seen = new Set<SourceLine>();
  for (;;) {
    seen.add(current);
    const parent = parentOf(current);
    const next = parent === undefined ? undefined : byUuid.get(parent);
    if (next === undefined || seen.has(next)) return uuidOf(current) ?? `line-${current.line}`;
    current = next;
  }
}

/** Which message lines of a thread are imported, and which are on other branches. */
export interface ThreadPath {
  /** Message lines on the path to the newest leaf, their split siblings and their tool results. */
  readonly included: ReadonlySet<SourceLine>;
  /** Lines (any type) on the parent chain of the newest leaf. */
  readonly chain: ReadonlySet<SourceLine>;
}

/**
 * Follows `parentUuid` (and `logicalParentUuid` across a compaction boundary) from the newest
 * message to the root. Assistant lines sharing a message id with a line of that chain are the
 * same response written one block per line (parallel tool calls fork the chain), and a user line
 * of tool results belongs with the calls it answers, by `tool_use_id`, wherever its parent is.
 * Every other message line is on another branch (rewind, edit, retry).
 */
export function newestPath(thread: Thread): ThreadPath {
  let leaf: SourceLine | undefined;
  for (const line of thread.lines) if (isMessageLine(line)) leaf = line;
  return pathTo(thread, leaf);
}

/**
 * The other branches' leaves: message lines off the main path that no message line continues
 * (a rewound, edited or retried part ends there), oldest first.
 */
export function otherLeaves(thread: Thread, main: ThreadPath): SourceLine[] {
  const parents = new Set<string>();
  for (const line of thread.lines) {
    const parent = parentOf(line);
    if (parent !== undefined && isMessageLine(line)) parents.add(parent);
  }
  return thread.lines.filter((line) => {
    const uuid = uuidOf(line);
    return (
      isMessageLine(line) && !main.included.has(line) && uuid !== undefined && !parents.has(uuid)
    );
  });
}

/** The path ending at `leaf` (see newestPath). */
export function pathTo(thread: Thread, leaf: SourceLine | undefined): ThreadPath {
  const byUuid = new Map<string, SourceLine>();
  for (const line of thread.lines) {
    const uuid = uuidOf(line);
    if (uuid !== undefined) byUuid.set(uuid, line);
  }
  const messageLines = thread.lines.filter(isMessageLine);
  const chain = new Set<SourceLine>();
  for (let current = leaf; current !== undefined && !chain.has(current);) {
    chain.add(current);
    const parent = parentOf(current) ?? logicalParentOf(current);
    // A message without any parent that is not the first one (files written or edited by
    // hand carry no links): the chain goes on with the message before it in the file.
    current = parent === undefined ? messageBefore(messageLines, current) : byUuid.get(parent);
  }
  const responseIds = new Set<string>();
  for (const line of chain) {
    const id = messageIdOf(line);
    if (lineType(line) === "assistant" && id !== undefined) responseIds.add(id);
  }
  const included = new Set<SourceLine>();
  const callIds = new Set<string>();
  for (const line of thread.lines) {
    if (!isMessageLine(line)) continue;
    const id = messageIdOf(line);
    const sibling = lineType(line) === "assistant" && id !== undefined && responseIds.has(id);
    // A message line without a uuid cannot be placed on any branch: it is kept where it is.
    if (chain.has(line) || sibling || uuidOf(line) === undefined) {
      included.add(line);
      for (const callId of toolUseIds(line)) callIds.add(callId);
    }
  }
  for (const line of thread.lines) {
    const ids = toolResultIdsOnly(line);
    if (ids !== undefined && ids.every((id) => callIds.has(id))) included.add(line);
  }
  return { included, chain };
}

function messageBefore(messages: readonly SourceLine[], line: SourceLine): SourceLine | undefined {
  let before: SourceLine | undefined;
  for (const candidate of messages) {
    if (candidate.line >= line.line) break;
    before = candidate;
  }
  return before;
}
