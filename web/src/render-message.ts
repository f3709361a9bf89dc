import type { ChatMLMessage } from "../../packages/library/src/history/chatml.js";
import {
  recordedBodyNode,
  recordedCacheNode,
  recordedCallLinks,
  type RecordedBodyReader,
} from "./recorded-body.js";
import type { StoredBlock, StoredMessage, View } from "./api.js";
import { costOf, latencyOf } from "./conversation-model.js";
import { badge, copyButton, element, imageNode, longText, pretty } from "./dom.js";
import { outsideCallsNode } from "./outside-calls.js";

/**
 * One message as a turn of a conversation: who wrote it, its text, its tool calls (each with a
 * link to its result) and results (each with a link to its call), images, and a header with the
 * facts the gateway stored (model, status, error, tokens, latency, cost).
 */
export interface MessageContext {
  readonly view: View;
  /** Where a link to a message (by stored id) goes. */
  readonly linkFor: (messageId: string) => string;
  readonly results: ReadonlyMap<string, { readonly messageId: string; readonly isError: boolean }>;
  readonly calls: ReadonlyMap<string, { readonly messageId: string; readonly name: string }>;
  /** Messages whose text the page limit may have cut (the page said so). */
  readonly possiblyCut: ReadonlySet<StoredMessage | ChatMLMessage>;
  readonly loadInFull: (message: StoredMessage | ChatMLMessage, button: HTMLButtonElement) => void;
  readonly compare: (messageId: string) => void;
  /** The turn number of a stored message that starts a turn. */
  readonly turnOf: ReadonlyMap<string, number>;
  /** The bytes of a stored message's image block (for its thumbnail). */
  readonly imageOf: (messageId: string, block: number) => Promise<Blob>;
  /** Reads a recorded call's request or response body. */
  readonly recordedBody: RecordedBodyReader;
}

const number = (value: number): string => value.toLocaleString("en");

function factsHeader(message: StoredMessage): HTMLElement {
  const gateway = message.metadata.gateway ?? {};
  const facts = element("div", { class: "facts" });
  if (gateway.model !== undefined) facts.append(badge(gateway.model, "model"));
  if (gateway.provider !== undefined) facts.append(` ${gateway.provider}`);
  if (message.status !== "completed")
    facts.append(badge(message.status, message.status === "in_progress" ? "" : "warn"));
  if (gateway.stopReason !== undefined) facts.append(` · stop ${gateway.stopReason}`);
  const usage = gateway.usage;
  if (usage !== undefined) {
    facts.append(
      ` · tokens in ${number(usage.input ?? 0)}, cache read ${number(usage.cacheRead ?? 0)}, cache write ${number(usage.cacheWrite ?? 0)}, out ${number(usage.output ?? 0)}`,
    );
  }
  const cost = costOf(message);
  if (cost !== undefined) {
    facts.append(
      cost.kind === "reported" || cost.kind === "estimated"
        ? ` · $${cost.dollars.toFixed(6)} ${cost.kind}`
        : cost.kind === "notBilled"
          ? " · not billed per token"
          : " · cost unknown",
    );
  }
  const latency = latencyOf(message);
  if (latency !== undefined) facts.append(` · ${(latency / 1000).toFixed(2)} s`);
  return facts;
}

/** The recorded call an answer came from: its request and response, read on opening. */
function recordedCallNode(callId: string, context: MessageContext): HTMLElement {
  const links = recordedCallLinks(callId);
  return element(
    "div",
    { class: "recorded-call" },
    `recorded call ${callId}: `,
    recordedBodyNode(context.recordedBody, "request", links.request),
    recordedBodyNode(context.recordedBody, "response", links.response),
    recordedCacheNode(context.recordedBody, links.call),
  );
}

function failure(message: StoredMessage): HTMLElement | undefined {
  const error = message.metadata.gateway?.error;
  if (message.status === "completed" || message.status === "in_progress") return undefined;
  return element(
    "div",
    { class: "failure" },
    element("strong", {}, `This ${message.type} ${message.status}`),
    error === undefined ? "" : `: ${error.code}: ${error.message}`,
    message.content.length === 0 ? element("div", {}, "Nothing was written before it ended.") : "",
  );
}

function callNode(
  id: string,
  name: string,
  argumentsText: string,
  context: MessageContext,
  alias: boolean,
): HTMLElement {
  const result = alias ? undefined : context.results.get(id);
  const node = element(
    "div",
    { class: "tool-call", "data-call": id },
    element(
      "div",
      { class: "call-head" },
      element("strong", {}, `${name}(…)`),
      ` ${id} `,
      copyButton("id", () => id),
    ),
    longText(argumentsText, { json: true }),
  );
  if (alias) return node;
  node.append(
    result === undefined
      ? element("div", { class: "pair missing" }, "no result stored for this call")
      : element(
          "a",
          {
            class: `pair ${result.isError ? "error-text" : ""}`.trim(),
            href: context.linkFor(result.messageId),
            "data-jump": result.messageId,
          },
          result.isError ? "result: error ↓" : "result ↓",
        ),
  );
  return node;
}

function storedBlock(
  block: StoredBlock,
  context: MessageContext,
  place: {
    readonly messageId: string;
    readonly index: number;
    /** The URL a recorded call named this image by, when the gateway kept one. */
    readonly imageUrl?: string;
  },
): HTMLElement {
  switch (block.type) {
    case "text":
      return longText(String(block["text"] ?? ""));
    case "image":
      return imageNode({
        sha256: String(block["sha256"] ?? ""),
        mimeType: String(block["mimeType"] ?? ""),
        load: () => context.imageOf(place.messageId, place.index),
      });
    case "imageOmitted":
      // A recorded call that named its image by URL passed it through unfetched: the URL is
      // what the model was given, so it is shown (as a link the console does not load).
      return place.imageUrl !== undefined
        ? imageNode({ url: place.imageUrl })
        : element(
            "div",
            { class: "note" },
            `an image (${String(block["mimeType"] ?? "")}) was dropped here`,
          );
    case "toolCall":
      return callNode(
        String(block["id"]),
        String(block["name"]),
        typeof block["arguments"] === "string"
          ? block["arguments"]
          : `base64: ${String(block["argumentsBase64"] ?? "")}`,
        context,
        false,
      );
    case "toolResult": {
      const callId = String(block["callID"]);
      const call = context.calls.get(callId);
      const text =
        typeof block["content"] === "string"
          ? block["content"]
          : `base64: ${String(block["contentBase64"] ?? "")}`;
      return element(
        "div",
        { class: `tool-result ${block["isError"] === true ? "is-error" : ""}`.trim() },
        element(
          "div",
          { class: "call-head" },
          element(
            "strong",
            {},
            `${String(block["toolName"] ?? "")} ${block["isError"] === true ? "failed" : "returned"}`,
          ),
          " for ",
          call === undefined
            ? `${callId} (no call stored)`
            : element(
                "a",
                { href: context.linkFor(call.messageId), "data-jump": call.messageId },
                `call ${callId} ↑`,
              ),
        ),
        longText(text, { json: true }),
      );
    }
    default:
      return element("pre", { class: "text json" }, pretty(block));
  }
}

function actions(
  message: StoredMessage,
  context: MessageContext,
  copyText: () => string,
): HTMLElement {
  const compare = element("button", { type: "button", class: "compare" }, "compare views");
  compare.addEventListener("click", () => context.compare(message.id));
  return element(
    "div",
    { class: "actions" },
    element("a", { href: context.linkFor(message.id), class: "link" }, "link"),
    copyButton("id", () => message.id),
    copyButton("JSON", copyText),
    compare,
  );
}

function cutNotice(
  message: StoredMessage | ChatMLMessage,
  context: MessageContext,
): HTMLElement | string {
  if (!context.possiblyCut.has(message)) return "";
  const button = element(
    "button",
    { type: "button", class: "load-full" },
    "load in full",
  ) as HTMLButtonElement;
  button.addEventListener("click", () => context.loadInFull(message, button));
  return element(
    "div",
    { class: "cut", role: "note" },
    "This text may be cut here by the page size limit. ",
    button,
  );
}

export function storedMessageNode(
  message: StoredMessage,
  context: MessageContext,
  previous: StoredMessage | undefined,
): HTMLElement {
  const isSummary = message.type === "summary";
  const compression = message.metadata.gateway?.compression;
  const node = element("article", {
    class: `message role-${message.role} type-${message.type} status-${message.status}`,
    "data-id": message.id,
    "data-source": message.id,
    tabindex: "-1",
    "aria-label": `${isSummary ? "compression summary" : message.role} message ${message.id}`,
  });
  const turn = context.turnOf.get(message.id);
  if (turn !== undefined) node.append(element("h3", { class: "turn-head" }, `Turn ${turn}`));
  node.append(
    element(
      "div",
      { class: "role" },
      isSummary ? "compression summary" : message.role,
      element("span", { class: "muted" }, ` ${message.id} · ${message.created_at}`),
    ),
  );
  if (previous !== undefined && message.previous_message_id !== previous.id) {
    node.append(
      element(
        "div",
        { class: "note" },
        message.previous_message_id === null ? "starts a new chain" : "continues ",
        message.previous_message_id === null
          ? ""
          : element(
              "a",
              {
                href: context.linkFor(message.previous_message_id),
                "data-jump": message.previous_message_id,
              },
              message.previous_message_id,
            ),
        message.previous_message_id === null ? "" : " (another branch)",
      ),
    );
  }
  if (isSummary && compression !== undefined) {
    node.append(
      element(
        "div",
        { class: "note" },
        `Replaces ${compression.messageCount} messages, from `,
        element(
          "a",
          {
            href: context.linkFor(compression.fromMessageId),
            "data-jump": compression.fromMessageId,
          },
          compression.fromMessageId,
        ),
        " through ",
        element(
          "a",
          {
            href: context.linkFor(compression.throughMessageId),
            "data-jump": compression.throughMessageId,
          },
          compression.throughMessageId,
        ),
        `; written by ${compression.source === "model" ? "a model" : "the caller"}. The model sees this summary instead of them.`,
      ),
    );
  }
  if (message.role === "assistant" || message.metadata.gateway?.usage !== undefined)
    node.append(factsHeader(message));
  const outside = message.metadata.gateway?.callsOutsideHistory;
  if (outside !== undefined) node.append(outsideCallsNode(outside));
  const callId = message.metadata.gateway?.recordedCallId;
  if (callId !== undefined) node.append(recordedCallNode(callId, context));
  const failed = failure(message);
  if (failed !== undefined) node.append(failed);
  const imageUrls = message.metadata.gateway?.imageUrls ?? {};
  message.content.forEach((block, index) =>
    node.append(
      storedBlock(block, context, {
        messageId: message.id,
        index,
        ...(imageUrls[String(index)] === undefined ? {} : { imageUrl: imageUrls[String(index)] }),
      }),
    ),
  );
  node.append(cutNotice(message, context));
  const caller = message.metadata.caller ?? {};
  if (Object.keys(caller).length > 0)
    node.append(element("div", { class: "facts" }, `caller metadata ${JSON.stringify(caller)}`));
  node.append(actions(message, context, () => JSON.stringify(message, null, 2)));
  return node;
}

function chatMLContent(content: ChatMLMessage["content"]): HTMLElement[] {
  if (content === null) return [];
  if (typeof content === "string") return [longText(content)];
  return content.map((part) =>
    part.type === "text" ? longText(part.text) : imageNode({ url: part.image_url.url }),
  );
}

export function chatMLMessageNode(
  message: ChatMLMessage,
  context: MessageContext,
  source: StoredMessage | undefined,
  key: string,
): HTMLElement {
  const alias = context.view === "model-visible";
  const node = element("article", {
    class: `message role-${message.role}`,
    "data-key": key,
    tabindex: "-1",
    "aria-label": `${message.role} message`,
    ...(source === undefined ? {} : { "data-source": source.id }),
  });
  const turn = source === undefined ? undefined : context.turnOf.get(source.id);
  if (turn !== undefined && message.role !== "tool")
    node.append(element("h3", { class: "turn-head" }, `Turn ${turn}`));
  node.append(
    element(
      "div",
      { class: "role" },
      source?.type === "summary" ? `${message.role} (compression summary)` : message.role,
    ),
  );
  if (source !== undefined && message.role === "assistant") node.append(factsHeader(source));
  if (source !== undefined && message.role === "assistant") {
    const failed = failure(source);
    if (failed !== undefined) node.append(failed);
  }
  if (message.role === "tool") {
    const call = alias ? undefined : context.calls.get(message.tool_call_id);
    node.append(
      element(
        "div",
        { class: "call-head" },
        `${message.name ?? "tool"} result for `,
        call === undefined
          ? message.tool_call_id
          : element(
              "a",
              { href: context.linkFor(call.messageId), "data-jump": call.messageId },
              `${message.tool_call_id} ↑`,
            ),
      ),
      longText(message.content, { json: true }),
    );
  } else {
    node.append(...chatMLContent(message.content));
  }
  if (message.role === "assistant") {
    for (const call of message.tool_calls ?? []) {
      node.append(callNode(call.id, call.function.name, call.function.arguments, context, alias));
    }
  }
  if (message.metadata !== undefined)
    node.append(element("div", { class: "facts" }, `metadata ${JSON.stringify(message.metadata)}`));
  node.append(cutNotice(message, context));
  const bar = element(
    "div",
    { class: "actions" },
    copyButton("JSON", () => JSON.stringify(message, null, 2)),
  );
  if (source !== undefined) {
    bar.prepend(element("a", { href: context.linkFor(source.id), class: "link" }, "link"));
    const compare = element("button", { type: "button", class: "compare" }, "compare views");
    compare.addEventListener("click", () => context.compare(source.id));
    bar.append(compare);
  }
  node.append(bar);
  return node;
}
