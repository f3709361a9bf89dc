import type { ChatMLMessage } from "../../packages/library/src/history/chatml.js";
import type { JobDetail, JobItem, JobTurn, StoredItemRow } from "./api.js";
import { badge, copyButton, diffNode, element, imageNode, longText } from "./dom.js";
import type { Row } from "./virtual-list.js";
import { usageText, type JobUsage } from "./job-usage.js";

/**
 * A job's turns and their items as rows: each item rendered as what it is (a message, a tool
 * call with its result, a command and its output, a file change as a diff, a search with its
 * results, a plan, an error), reasoning collapsed.
 */
const text = (value: unknown): string =>
  typeof value === "string" ? value : JSON.stringify(value);

function itemBody(
  item: JobItem,
  resultsByCall: ReadonlyMap<string, StoredItemRow>,
  linkFor: (key: string) => string,
): HTMLElement[] {
  switch (item.type) {
    case "system_message":
      return [
        element(
          "details",
          {},
          element("summary", {}, "system instructions"),
          longText(text(item["text"])),
        ),
      ];
    case "user_message":
    case "agent_message": {
      const nodes = [longText(text(item["text"]))];
      const images = item["images"];
      if (Array.isArray(images))
        for (const image of images as { url: string }[]) nodes.push(imageNode({ url: image.url }));
      return nodes;
    }
    case "reasoning":
      return [
        element(
          "details",
          { class: "thinking" },
          element("summary", {}, "reasoning (collapsed)"),
          ...((item["summary"] as string[] | undefined) ?? []).map((one) => longText(one)),
        ),
      ];
    case "tool_call": {
      const result = resultsByCall.get(text(item["call_id"]));
      return [
        element(
          "div",
          { class: "call-head" },
          element("strong", {}, `${text(item["name"])}(…)`),
          ` ${text(item["call_id"])} · ${text(item["execution_mechanism"])}`,
        ),
        longText(text(item["arguments"]), { json: true }),
        result === undefined
          ? element("div", { class: "pair missing" }, "no result yet")
          : element(
              "a",
              { class: "pair", href: linkFor(result.item_key), "data-jump-item": result.item_key },
              result.item["is_error"] === true ? "result: error ↓" : "result ↓",
            ),
      ];
    }
    case "tool_result":
      return [
        element(
          "div",
          { class: "call-head" },
          element(
            "strong",
            {},
            `${text(item["name"])} ${item["is_error"] === true ? "failed" : "returned"}`,
          ),
          ` for call ${text(item["call_id"])}`,
        ),
        longText(text(item["output"]), { json: true }),
      ];
    case "command_execution":
      return [
        element(
          "div",
          { class: "call-head" },
          element("code", {}, `$ ${((item["command"] as string[] | undefined) ?? []).join(" ")}`),
          ` · ${text(item["status"])} · exit ${item["exit_code"] === null ? "—" : text(item["exit_code"])}${item["cwd"] === undefined ? "" : ` · in ${text(item["cwd"])}`}`,
        ),
        longText(text(item["output"])),
      ];
    case "file_change":
      return (
        (item["changes"] as
          { path: string; kind: string; diff?: string; move_path?: string }[] | undefined) ?? []
      ).map((change) =>
        element(
          "div",
          { class: "file-change" },
          element(
            "div",
            { class: "call-head" },
            `${change.kind} ${change.path}${change.move_path === undefined ? "" : ` → ${change.move_path}`} · ${text(item["status"])}`,
          ),
          change.diff === undefined ? "" : diffNode(change.diff),
        ),
      );
    case "web_search": {
      const results =
        (item["results"] as { title: string; url: string; snippet: string }[] | undefined) ?? [];
      return [
        element(
          "div",
          { class: "call-head" },
          `search “${text(item["query"])}” · ${text(item["status"])}`,
        ),
        element(
          "ul",
          {},
          ...results.map((one) =>
            element("li", {}, element("strong", {}, one.title), ` ${one.url} — ${one.snippet}`),
          ),
        ),
      ];
    }
    case "plan":
      return [
        item["explanation"] === undefined ? element("span") : longText(text(item["explanation"])),
        element(
          "ol",
          {},
          ...((item["steps"] as { step: string; status: string }[] | undefined) ?? []).map((step) =>
            element("li", {}, `[${step.status}] ${step.step}`),
          ),
        ),
      ];
    case "error":
      return [
        element(
          "div",
          { class: "failure" },
          element(
            "strong",
            {},
            `error${item["code"] === undefined ? "" : ` ${text(item["code"])}`}`,
          ),
          `: ${text(item["message"])}${item["retryable"] === true ? " (retryable)" : ""}`,
        ),
      ];
    case "notice":
      return [
        element(
          "div",
          { class: "call-head" },
          element("strong", {}, text(item["kind"])),
          item["text"] === "" ? "" : ` ${text(item["text"])}`,
        ),
        item["details"] === undefined
          ? element("span")
          : longText(text(item["details"]), { json: true }),
      ];
    default:
      return [longText(JSON.stringify(item, null, 2), { json: true })];
  }
}

function itemRow(
  turn: JobTurn,
  row: StoredItemRow,
  resultsByCall: ReadonlyMap<string, StoredItemRow>,
  linkFor: (key: string) => string,
): Row {
  return {
    key: `item:${row.item_key}`,
    build: () => {
      const marks = element("span");
      if (row.item["redacted"] === true) marks.append(badge("redacted", "warn"));
      if (row.item["content_truncated"] === true) marks.append(badge("cut by the runtime", "warn"));
      return element(
        "article",
        {
          class: `message item-${row.item.type}`,
          "data-item-key": row.item_key,
          tabindex: "-1",
          "aria-label": `${row.item.type} ${row.item_key}`,
        },
        element(
          "div",
          { class: "role" },
          row.item.type.replace("_", " "),
          marks,
          element(
            "span",
            { class: "muted" },
            ` #${row.position} · rev ${row.revision} · ${row.item_key} · turn ${turn.turn_index}`,
          ),
        ),
        ...itemBody(row.item, resultsByCall, linkFor),
        typeof row.item["usage"] === "object" && row.item["usage"] !== null
          ? element(
              "div",
              { class: "facts usage" },
              `model call: ${usageText(row.item["usage"] as JobUsage)}`,
            )
          : "",
        element(
          "div",
          { class: "actions" },
          element("a", { href: linkFor(row.item_key), class: "link" }, "link"),
          copyButton("key", () => row.item_key),
          copyButton("JSON", () => JSON.stringify(row.item, null, 2)),
        ),
      );
    },
  };
}

function messageRow(turn: JobTurn, message: ChatMLMessage, index: number): Row {
  return {
    key: `turn:${turn.id}:${index}`,
    build: () => {
      const node = element(
        "article",
        {
          class: `message role-${message.role}`,
          tabindex: "-1",
          "aria-label": `${message.role} message`,
        },
        element("div", { class: "role" }, message.role),
      );
      if (message.role === "tool")
        node.append(
          element(
            "div",
            { class: "call-head" },
            `${message.name ?? "tool"} result for ${message.tool_call_id}`,
          ),
        );
      const content = message.content;
      if (typeof content === "string")
        node.append(longText(content, { json: message.role === "tool" }));
      else if (content !== null)
        for (const part of content)
          node.append(
            part.type === "text" ? longText(part.text) : imageNode({ url: part.image_url.url }),
          );
      if (message.role === "assistant") {
        for (const call of message.tool_calls ?? []) {
          node.append(
            element(
              "div",
              { class: "tool-call" },
              element(
                "div",
                { class: "call-head" },
                element("strong", {}, `${call.function.name}(…)`),
                ` ${call.id}`,
              ),
              longText(call.function.arguments, { json: true }),
            ),
          );
        }
      }
      if (message.metadata !== undefined)
        node.append(
          element("div", { class: "facts" }, `metadata ${JSON.stringify(message.metadata)}`),
        );
      node.append(
        element(
          "div",
          { class: "actions" },
          copyButton("JSON", () => JSON.stringify(message, null, 2)),
        ),
      );
      return node;
    },
  };
}

export function jobRows(
  detail: JobDetail,
  linkFor: (key: string) => string,
): { rows: Row[]; itemCount: number } {
  const rows: Row[] = [];
  let itemCount = 0;
  for (const turn of detail.turns) {
    const items = turn.trajectory.items ?? [];
    const messages = turn.trajectory.messages ?? [];
    const resultsByCall = new Map<string, StoredItemRow>();
    for (const row of items)
      if (row.item.type === "tool_result") resultsByCall.set(text(row.item["call_id"]), row);
    rows.push({
      key: `turn:${turn.id}`,
      build: () => {
        const marks = element("span");
        if (turn.trajectory.metadata.redacted === true) marks.append(badge("redacted", "warn"));
        if (turn.trajectory.metadata.content_truncated)
          marks.append(badge("cut by the page size limit", "warn"));
        const empty = items.length === 0 && messages.length === 0;
        return element(
          "div",
          { class: `turn status-${turn.status}` },
          element(
            "h3",
            {},
            `Turn ${turn.turn_index} · attempt ${turn.attempt ?? 1} · revision ${turn.revision} · `,
            badge(turn.status, turn.status === "failed" ? "warn" : ""),
            ` · ${turn.item_count ?? items.length} items`,
            marks,
          ),
          turn.usage === undefined || turn.usage === null
            ? ""
            : element("p", { class: "facts usage" }, `Turn usage: ${usageText(turn.usage)}`),
          empty ? element("p", { class: "empty" }, "Empty trajectory.") : "",
        );
      },
    });
    itemCount += items.length;
    for (const row of items) rows.push(itemRow(turn, row, resultsByCall, linkFor));
    messages.forEach((message, index) => rows.push(messageRow(turn, message, index)));
  }
  return { rows, itemCount };
}
