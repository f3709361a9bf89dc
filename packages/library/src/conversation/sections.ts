import { VerbatimError } from "../core/errors.js";
import { sha256Hex } from "../core/hash.js";
import type { SentFact } from "../format/conversation-schema.js";
import type { TextBlock } from "../history/message.js";
import type { ContextSection } from "./api.js";

export interface SectionPlan {
  /** One text block per section the model must get in this turn's message, in host order. */
  readonly blocks: readonly TextBlock[];
  /** What the model holds after this turn: every section it has, name → SHA-256 of content. */
  readonly record: ReadonlyMap<string, string> | undefined;
}

/**
 * Decides which context sections a turn sends (A9). The model holds what the last turn's
 * record says (`sentFacts[last].sections`): a section goes again only when its content changed
 * since, or when the model no longer has it (a record without it: a new conversation, after
 * compaction, a new CLI session). A section the host stopped supplying stays in the record:
 * the model still has it in its context.
 */
export function planSections(
  supplied: readonly ContextSection[],
  held: ReadonlyMap<string, string> | undefined,
): SectionPlan {
  const record = new Map(held ?? []);
  const blocks: TextBlock[] = [];
  const seen = new Set<string>();
  for (const section of supplied) {
    if (seen.has(section.name)) {
      throw new VerbatimError(
        "invalid_argument",
        `context section "${section.name}" is supplied twice`,
        {
          where: "sections()",
          hint: "Give each context section a distinct name.",
        },
      );
    }
    seen.add(section.name);
    const hash = sha256Hex(section.content);
    if (record.get(section.name) === hash) continue;
    record.set(section.name, hash);
    blocks.push({ type: "text", text: sectionText(section) });
  }
  return { blocks, record: record.size === 0 ? undefined : record };
}

/** How a section reads in the turn's message: a heading with its name, then its content. */
export function sectionText(section: ContextSection): string {
  return `# ${section.name}\n${section.content}`;
}

/** The sections the model holds now: the last turn's record. */
export function heldSections(
  sentFacts: readonly SentFact[],
): ReadonlyMap<string, string> | undefined {
  return sentFacts.at(-1)?.sections;
}
