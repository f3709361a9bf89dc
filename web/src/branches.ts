import type { Branch, ConversationModel } from "./conversation-model.js";
import { branchDrawing, placeBranches } from "./branch-drawing.js";
import { element } from "./dom.js";

/**
 * The branches of a conversation (forks): a picker that selects one (its leaf becomes the
 * `anchor` of the address), the tree drawn (branch-drawing.ts), and the same tree as a list in
 * which each branch sits under the branch it forks from, with the message it forks after.
 */
export interface BranchLinks {
  /** The address of the conversation following `anchor` (all branches when undefined). */
  readonly branch: (anchor: string | undefined) => string;
  /** The address of one message of the shown view. */
  readonly message: (messageId: string) => string;
  readonly navigate: (address: string) => void;
}

function parents(model: ConversationModel, branches: readonly Branch[]): (number | null)[] {
  const chains = branches.map(
    (branch) => new Set(model.chainTo(branch.leaf.id).map((one) => one.id)),
  );
  return branches.map((branch, index) => {
    if (branch.forkedAt === null) return null;
    const parent = chains.findIndex(
      (chain, other) => other < index && chain.has(branch.forkedAt ?? ""),
    );
    return parent === -1 ? null : parent;
  });
}

export function branchesNode(
  model: ConversationModel,
  branches: readonly Branch[],
  options: {
    readonly shown: string | undefined;
    readonly picked: boolean;
    readonly allLabel: string;
  },
  links: BranchLinks,
): HTMLElement {
  if (branches.length <= 1) {
    return element("p", { class: "muted" }, branches.length === 1 ? "One branch (no fork)." : "");
  }
  const picker = element("select", { id: "branch" }) as HTMLSelectElement;
  picker.append(element("option", { value: "" }, options.allLabel));
  branches.forEach((branch, index) => {
    const option = element(
      "option",
      { value: branch.leaf.id },
      `branch ${index + 1}: ${branch.length} messages, ends at ${branch.leaf.id}${branch.forkedAt === null ? "" : `, forks after ${branch.forkedAt}`}`,
    ) as HTMLOptionElement;
    option.selected = options.picked && branch.leaf.id === options.shown;
    picker.append(option);
  });
  picker.addEventListener("change", () =>
    links.navigate(links.branch(picker.value === "" ? undefined : picker.value)),
  );
  const parentOf = parents(model, branches);
  const items = branches.map((branch, index) =>
    element(
      "li",
      {},
      element("a", { href: links.branch(branch.leaf.id) }, `branch ${index + 1}`),
      ` · ${branch.length} messages · ends at ${branch.leaf.id}`,
      branch.forkedAt === null
        ? ""
        : element(
            "span",
            {},
            " · forks after ",
            element(
              "a",
              { href: links.message(branch.forkedAt), "data-jump": branch.forkedAt },
              branch.forkedAt,
            ),
          ),
      branch.leaf.id === options.shown ? " · shown" : "",
    ),
  );
  const root = element("ul", { class: "branch-tree" });
  items.forEach((item, index) => {
    const parent = parentOf[index];
    const parentItem = parent === null || parent === undefined ? undefined : items[parent];
    if (parentItem === undefined) {
      root.append(item);
      return;
    }
    let nested = parentItem.querySelector(":scope > ul");
    if (nested === null) {
      nested = element("ul");
      parentItem.append(nested);
    }
    nested.append(item);
  });
  const drawing = branchDrawing(placeBranches(model, branches, parentOf), options.shown, {
    branch: links.branch,
    message: links.message,
    navigate: links.navigate,
  });
  return element(
    "div",
    {},
    element("label", { for: "branch" }, `${branches.length} branches: `),
    picker,
    drawing as unknown as HTMLElement,
    element("details", {}, element("summary", {}, "branches as a list"), root),
  );
}
