import type { ChatMLMessage } from "../../src/history/chatml.js";
import type {
  JobDetail,
  MessagesPage,
  ProjectionMetadata,
  StoredItemRow,
  StoredMessage,
} from "./api.js";

/** Builds DOM nodes with text only (never innerHTML: stored content is untrusted). */
export function element(
  tag: string,
  attributes: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElement {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

function pretty(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function badges(metadata: ProjectionMetadata): HTMLElement {
  const span = element("span");
  if (metadata.redacted === true) span.append(element("span", { class: "badge warn" }, "redacted"));
  if (metadata.content_truncated) {
    span.append(element("span", { class: "badge warn" }, "content_truncated"));
  }
  return span;
}

function storedMessageNode(message: StoredMessage): HTMLElement {
  return element(
    "div",
    { class: `message role-${message.role}`, "data-id": message.id },
    element("div", { class: "role" }, `${message.role} · ${message.type}`),
    element(
      "div",
      { class: "facts" },
      `${message.id} · ${message.status} · after ${message.previous_message_id ?? "(start)"} · ${message.created_at}`,
    ),
    element("pre", {}, pretty(message.content)),
    element("pre", { class: "facts" }, pretty(message.metadata)),
  );
}

function chatMLNode(message: ChatMLMessage): HTMLElement {
  const node = element(
    "div",
    { class: `message role-${message.role}` },
    element("div", { class: "role" }, message.role),
  );
  if (message.role === "tool") {
    node.append(element("div", { class: "facts" }, `tool_call_id ${message.tool_call_id}`));
  }
  if (message.content !== null) node.append(element("pre", {}, pretty(message.content)));
  if (message.role === "assistant" && message.tool_calls !== undefined) {
    for (const call of message.tool_calls) {
      node.append(
        element(
          "pre",
          { class: "facts" },
          `${call.id} → ${call.function.name}(${call.function.arguments})`,
        ),
      );
    }
  }
  if (message.metadata !== undefined) {
    node.append(element("div", { class: "facts" }, JSON.stringify(message.metadata)));
  }
  return node;
}

function itemNode(row: StoredItemRow): HTMLElement {
  return element(
    "div",
    { class: "message" },
    element("div", { class: "role" }, row.item.type),
    element("div", { class: "facts" }, `#${row.position} · rev ${row.revision} · ${row.item_key}`),
    element("pre", {}, pretty(row.item)),
  );
}

export function renderMessages(page: MessagesPage): HTMLElement {
  const root = element(
    "div",
    {},
    element("h2", {}, `Conversation ${page.conversation_id}`, badges(page.metadata)),
  );
  if (page.messages.length === 0) root.append(element("p", { class: "empty" }, "No messages."));
  for (const message of page.messages) {
    root.append(
      page.view === "stored"
        ? storedMessageNode(message as StoredMessage)
        : chatMLNode(message as ChatMLMessage),
    );
  }
  return root;
}

export function renderJob(detail: JobDetail): HTMLElement {
  const { job } = detail;
  const root = element(
    "div",
    {},
    element("h2", {}, `Job ${job.id}`),
    element("pre", { class: "json" }, pretty(job)),
  );
  if (detail.turns.length === 0) root.append(element("p", { class: "empty" }, "No turns yet."));
  for (const turn of detail.turns) {
    const node = element(
      "div",
      { class: "turn" },
      element(
        "h3",
        {},
        `Turn ${turn.turn_index} · revision ${turn.revision} · ${turn.status}`,
        badges(turn.trajectory.metadata),
      ),
    );
    const items = turn.trajectory.items ?? [];
    const messages = turn.trajectory.messages ?? [];
    if (items.length === 0 && messages.length === 0) {
      node.append(element("p", { class: "empty" }, "Empty trajectory."));
    }
    for (const row of items) node.append(itemNode(row));
    for (const message of messages) node.append(chatMLNode(message));
    root.append(node);
  }
  return root;
}
