import type { Item } from "../format/items.js";

/**
 * A plain-text rendering of panel items (A25): what a CLI session started after reopening is
 * told about the conversation so far. One paragraph per item, separated by a blank line:
 *
 * - `User: <text>` (`User (with image): …` when the message carried an image)
 * - `Assistant: <text>`, `Thinking: <text>`
 * - `Tool <name> <status>: <summary> — <statusText>` (the parts that are present)
 * - `Approval <toolName>: <summary>`, `Notice: <text>`, `Failure: <message>`
 * - `Questions:` then one `- <question>` line each (` → <answer>` when answered)
 * - `Directions: <text>` then one `- <title>` line per option (`(chosen)` on the chosen one)
 * - `Skill proposal <name>: <description>`, `Lint rule proposal <name>: <description>`
 * - `Web search: <query>` then one `- <title> <url>` line per result
 * - `Reported issue: <title>` then the body
 *
 * Items render in order; `detail` and `citations` are left out (the panel shows them on demand).
 */
export function transcriptText(items: readonly Item[]): string {
  return items.map(itemText).join("\n\n");
}

function itemText(item: Item): string {
  switch (item.type) {
    case "user":
      return `${item.hasImage === true ? "User (with image)" : "User"}: ${item.text}`;
    case "assistant":
      return `Assistant: ${item.text}`;
    case "thinking":
      return `Thinking: ${item.text}`;
    case "tool": {
      const parts = [item.summary, item.statusText].filter((part) => part !== undefined);
      const tail = parts.length > 0 ? `: ${parts.join(" — ")}` : "";
      return `Tool ${item.name} ${item.status}${tail}`;
    }
    case "notice":
      return `Notice: ${item.text}`;
    case "failure":
      return `Failure: ${item.message}`;
    case "questions":
      return [
        "Questions:",
        ...item.questions.map(
          (question) =>
            `- ${question.text}${question.answer === undefined ? "" : ` → ${question.answer}`}`,
        ),
      ].join("\n");
    case "directions":
      return [
        `Directions: ${item.text}`,
        ...item.options.map(
          (option, index) => `- ${option.title}${item.chosen === index ? " (chosen)" : ""}`,
        ),
      ].join("\n");
    case "skillProposal":
      return `Skill proposal ${item.name}: ${item.description}`;
    case "lintRuleProposal":
      return `Lint rule proposal ${item.name}: ${item.description}`;
    case "toolApproval":
      return `Approval ${item.toolName}: ${item.summary}`;
    case "webSearch":
      return [
        `Web search: ${item.query}`,
        ...item.results.map((result) => `- ${result.title} ${result.url}`),
      ].join("\n");
    case "reportedIssue":
      return `Reported issue: ${item.title}\n${item.body}`;
    default: {
      const unreachable: never = item;
      return String(unreachable);
    }
  }
}
