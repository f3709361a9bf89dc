import type { Branch, ConversationModel } from "./conversation-model.js";

/**
 * The branches of a conversation drawn as a tree (SVG): one lane per branch, the x axis the
 * position in the conversation; a branch leaves its parent's lane at its fork point (a dot
 * that links to that message) and ends at its leaf. Each branch is a link (Tab reaches it,
 * Enter picks it) with a label saying what it is; the branch shown is drawn thick and marked
 * `aria-current`.
 */
const SVG = "http://www.w3.org/2000/svg";
const LANE = 30;
const TOP = 16;
const LEFT = 12;
const LABEL = 250;
const WIDTH = 720;

function svg(tag: string, attributes: Record<string, string>, ...children: Node[]): SVGElement {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  node.append(...children);
  return node;
}

export interface DrawnBranch {
  readonly branch: Branch;
  /** The lane of the branch it forks from (null: the first branch). */
  readonly parent: number | null;
  /** Where it forks: the fork point's index in the branch's chain (-1: from the start). */
  readonly forkIndex: number;
}

/** Each branch with its parent lane and fork position, as the drawing places them. */
export function placeBranches(
  model: ConversationModel,
  branches: readonly Branch[],
  parentOf: readonly (number | null)[],
): DrawnBranch[] {
  return branches.map((branch, index) => ({
    branch,
    parent: parentOf[index] ?? null,
    forkIndex:
      branch.forkedAt === null
        ? -1
        : model.chainTo(branch.leaf.id).findIndex((one) => one.id === branch.forkedAt),
  }));
}

export function branchDrawing(
  drawn: readonly DrawnBranch[],
  shown: string | undefined,
  links: {
    readonly branch: (anchor: string) => string;
    readonly message: (messageId: string) => string;
    readonly navigate: (address: string) => void;
  },
): SVGElement {
  const longest = Math.max(1, ...drawn.map((one) => one.branch.length));
  const step = (WIDTH - LEFT - LABEL - 12) / Math.max(1, longest - 1);
  const x = (index: number) => LEFT + Math.max(0, index) * step;
  const y = (lane: number) => TOP + lane * LANE;
  const height = TOP * 2 + (drawn.length - 1) * LANE;
  const follow = (link: SVGElement, address: string) =>
    link.addEventListener("click", (event) => {
      if ((event as MouseEvent).ctrlKey || (event as MouseEvent).metaKey) return;
      event.preventDefault();
      links.navigate(address);
    });
  const lanes: SVGElement[] = [];
  const forks: SVGElement[] = [];
  drawn.forEach((one, lane) => {
    const { branch, parent, forkIndex } = one;
    const isShown = branch.leaf.id === shown;
    const end = branch.length - 1;
    const startX = x(forkIndex + 1);
    let path = `M ${startX} ${y(lane)} H ${x(end)}`;
    if (parent !== null && forkIndex >= 0) {
      const fromX = x(forkIndex);
      path = `M ${fromX} ${y(parent)} C ${fromX} ${y(lane)}, ${fromX} ${y(lane)}, ${startX} ${y(lane)} H ${x(end)}`;
    }
    const name = `branch ${lane + 1}`;
    const label = `${name}: ${branch.length} messages${branch.forkedAt === null ? "" : `, forks after ${branch.forkedAt}`}, ends at ${branch.leaf.id}${isShown ? " (shown)" : ""}`;
    const address = links.branch(branch.leaf.id);
    const link = svg(
      "a",
      {
        href: address,
        class: isShown ? "lane shown" : "lane",
        "aria-label": label,
        "data-leaf": branch.leaf.id,
        ...(isShown ? { "aria-current": "true" } : {}),
      },
      svg("title", {}, document.createTextNode(label)),
      svg("path", { d: path, class: "lane-line" }),
      svg("circle", { cx: String(x(end)), cy: String(y(lane)), r: "5", class: "leaf" }),
      svg(
        "text",
        { x: String(WIDTH - LABEL), y: String(y(lane) + 4), class: "lane-label" },
        document.createTextNode(`${name} · ${branch.length} messages${isShown ? " · shown" : ""}`),
      ),
    );
    follow(link, address);
    lanes.push(link);
    if (parent !== null && branch.forkedAt !== null && forkIndex >= 0) {
      const forkAddress = links.message(branch.forkedAt);
      const forkLabel = `fork point of ${name}: message ${branch.forkedAt}`;
      const fork = svg(
        "a",
        { href: forkAddress, class: "fork", "aria-label": forkLabel, "data-fork": branch.forkedAt },
        svg("title", {}, document.createTextNode(forkLabel)),
        svg("circle", { cx: String(x(forkIndex)), cy: String(y(parent)), r: "6" }),
      );
      follow(fork, forkAddress);
      forks.push(fork);
    }
  });
  const drawing = svg(
    "svg",
    {
      class: "branch-drawing",
      role: "group",
      "aria-label": `${drawn.length} branches drawn as a tree: each a link that shows it; dots are fork points`,
      viewBox: `0 0 ${WIDTH} ${height}`,
      width: "100%",
    },
    ...lanes,
    ...forks,
  );
  // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
  drawing.style.maxWidth = `${WIDTH}px`;
  return drawing;
}
