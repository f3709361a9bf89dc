import { urlUse } from "./safe-url.js";

/** DOM building blocks of the page: text only (never innerHTML: stored content is untrusted). */
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

export function pretty(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

/** A button that copies `text` and says so. */
export function copyButton(label: string, text: () => string): HTMLElement {
  const button = element("button", { type: "button", class: "copy" }, `copy ${label}`);
  button.addEventListener("click", () => {
    const done = (word: string) => {
      button.textContent = word;
      setTimeout(() => (button.textContent = `copy ${label}`), 1200);
    };
    navigator.clipboard?.writeText(text()).then(
      () => done("copied"),
      () => done("copy refused"),
    ) ?? done("no clipboard");
  });
  return button;
}

const LONG_CHARACTERS = 1500;
const LONG_LINES = 24;

/**
 * Text as written (whitespace kept). Long text is collapsed to its start with a "show all"
 * button that says how much is hidden; nothing is dropped from the page.
 */
export function longText(text: string, options: { json?: boolean } = {}): HTMLElement {
  let shown = text;
  if (options.json === true) {
    try {
      shown = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      shown = text;
    }
  }
  const lines = shown.split("\n");
  const long = shown.length > LONG_CHARACTERS || lines.length > LONG_LINES;
  const pre = element("pre", { class: options.json === true ? "text json" : "text" });
  if (!long) {
    pre.textContent = shown;
    return pre;
  }
  const head =
    lines.length > LONG_LINES
      ? lines.slice(0, LONG_LINES).join("\n")
      : shown.slice(0, LONG_CHARACTERS);
  const cut = head.length > LONG_CHARACTERS ? head.slice(0, LONG_CHARACTERS) : head;
  pre.textContent = cut;
  const button = element(
    "button",
    { type: "button", class: "show-all", "aria-expanded": "false" },
    `show all (${shown.length.toLocaleString("en")} characters, ${lines.length.toLocaleString("en")} lines; ${(shown.length - cut.length).toLocaleString("en")} hidden)`,
  );
  button.addEventListener("click", () => {
    const expanded = button.getAttribute("aria-expanded") === "true";
    pre.textContent = expanded ? cut : shown;
    button.setAttribute("aria-expanded", String(!expanded));
    button.textContent = expanded
      ? `show all (${shown.length.toLocaleString("en")} characters)`
      : "collapse";
  });
  return element("div", { class: "long" }, pre, button);
}

/** Hex SHA-256 of bytes, when the page runs in a secure context (loopback or https). */
export async function sha256Hex(bytes: Uint8Array): Promise<string | undefined> {
  if (globalThis.crypto?.subtle === undefined) return undefined;
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * An image: a thumbnail for a `data:image/…` URL (its SHA-256 computed here), a link for an
 * `http:`/`https:` URL (the page never loads an outside address by itself), inert text for any
 * other URL (urlUse), or the stored SHA-256 when the bytes are not in the reply.
 */
export function imageNode(source: {
  url?: string;
  sha256?: string;
  mimeType?: string;
  /** Fetches the bytes of a stored image (by SHA-256) to show it as a thumbnail. */
  load?: () => Promise<Blob>;
}): HTMLElement {
  const box = element("figure", { class: "image" });
  const caption = element("figcaption");
  const use = source.url === undefined ? undefined : urlUse(source.url, "image");
  if (use?.as === "image") {
    const url = use.src;
    const image = element("img", { src: url, alt: "image from the conversation" });
    box.append(image);
    caption.append(`${url.slice(5, url.indexOf(";"))} · SHA-256 …`);
    const comma = url.indexOf(",");
    try {
      const bytes = Uint8Array.from(atob(url.slice(comma + 1)), (char) => char.charCodeAt(0));
      void sha256Hex(bytes).then((hex) => {
        caption.textContent = `${bytes.length.toLocaleString("en")} bytes · SHA-256 ${hex ?? "(not available here)"}`;
      });
    } catch {
      caption.textContent = "an image whose data: URL is not base64";
    }
  } else if (use?.as === "link") {
    box.append(
      element(
        "a",
        { href: use.href, rel: "noreferrer noopener", target: "_blank" },
        source.url ?? "",
      ),
    );
    caption.append("image link (not loaded by the console)");
  } else if (source.url !== undefined) {
    box.append(longText(source.url));
    caption.append("image URL shown as text (only http: and https: become links)");
  } else {
    const placeholder = element("div", { class: "image-placeholder", "aria-hidden": "true" }, "🖼");
    box.append(placeholder);
    caption.append(`${source.mimeType ?? "image"} · SHA-256 ${source.sha256 ?? "unknown"}`);
    source.load?.().then(
      (blob) => {
        const url = URL.createObjectURL(blob);
        const image = element("img", {
          src: url,
          alt: `image ${source.sha256 ?? ""} from the conversation`,
          class: "thumbnail",
        });
        image.addEventListener("load", () => URL.revokeObjectURL(url), { once: true });
        placeholder.replaceWith(image);
        caption.textContent = `${source.mimeType ?? blob.type} · ${blob.size.toLocaleString("en")} bytes · SHA-256 ${source.sha256 ?? "unknown"}`;
      },
      (error: unknown) => {
        caption.append(
          element(
            "span",
            { class: "muted" },
            ` · bytes not shown: ${error instanceof Error ? error.message : String(error)}`,
          ),
        );
      },
    );
  }
  box.append(caption);
  return box;
}

/** A unified diff with added and removed lines marked. */
export function diffNode(diff: string): HTMLElement {
  const pre = element("pre", { class: "diff" });
  for (const line of diff.split("\n")) {
    const kind = line.startsWith("+")
      ? "add"
      : line.startsWith("-")
        ? "remove"
        : line.startsWith("@@")
          ? "hunk"
          : "";
    pre.append(element("span", kind === "" ? {} : { class: kind }, `${line}\n`));
  }
  return pre;
}

export function badge(text: string, kind = ""): HTMLElement {
  return element("span", { class: `badge ${kind}`.trim() }, text);
}
