import { element } from "./dom.js";

/**
 * Virtualised scrolling for long lists of rows of any height: rows are grouped in blocks; a
 * block is built only when it comes near the visible part of its scroll container and is
 * emptied (keeping its measured height) when it goes far out of it. Rows can be appended
 * while the rest of a conversation loads.
 */
export interface Row {
  readonly key: string;
  build(): HTMLElement;
}

const BLOCK_ROWS = 40;
const ESTIMATED_ROW_PX = 110;

interface Block {
  readonly node: HTMLElement;
  readonly rows: Row[];
  built: boolean;
  height: number | undefined;
}

export class VirtualList {
  readonly node: HTMLElement;
  private readonly blocks: Block[] = [];
  private readonly observer: IntersectionObserver;
  private readonly keyToBlock = new Map<string, number>();
  private count = 0;

  constructor(scroller: HTMLElement, attributes: Record<string, string> = {}) {
    this.node = element("div", { class: "virtual", ...attributes });
    this.observer = new IntersectionObserver((entries) => this.onIntersect(entries), {
      root: scroller,
      rootMargin: "1200px 0px",
    });
  }

  get length(): number {
    return this.count;
  }

  append(rows: readonly Row[]): void {
    for (const row of rows) {
      let block = this.blocks[this.blocks.length - 1];
      if (block === undefined || block.rows.length >= BLOCK_ROWS) {
        block = {
          node: element("div", { class: "block" }),
          rows: [],
          built: false,
          height: undefined,
        };
        this.blocks.push(block);
        this.node.append(block.node);
        this.observer.observe(block.node);
      }
      block.rows.push(row);
      this.keyToBlock.set(row.key, this.blocks.length - 1);
      this.count += 1;
      if (block.built) block.node.append(row.build());
      else block.node.style.height = `${block.rows.length * ESTIMATED_ROW_PX}px`;
    }
  }

  private build(block: Block): void {
    if (block.built) return;
    block.built = true;
    block.node.style.height = "";
    block.node.replaceChildren(...block.rows.map((row) => row.build()));
  }

  private empty(block: Block): void {
    if (!block.built || block.node.contains(document.activeElement)) return;
    block.height = block.node.getBoundingClientRect().height;
    block.built = false;
    block.node.style.height = `${block.height}px`;
    block.node.replaceChildren();
  }

  private onIntersect(entries: readonly IntersectionObserverEntry[]): void {
    for (const entry of entries) {
      const block = this.blocks.find((one) => one.node === entry.target);
      if (block === undefined) continue;
      if (entry.isIntersecting) this.build(block);
      else this.empty(block);
    }
  }

  /** Builds the row's block and returns the row's node (to scroll to or focus). */
  reveal(key: string, selector: (key: string) => string): HTMLElement | undefined {
    const index = this.keyToBlock.get(key);
    if (index === undefined) return undefined;
    const block = this.blocks[index];
    if (block === undefined) return undefined;
    this.build(block);
    return block.node.querySelector<HTMLElement>(selector(key)) ?? undefined;
  }

  has(key: string): boolean {
    return this.keyToBlock.has(key);
  }

  /** The key of the first row whose node is at or below the top of the scroller. */
  firstVisibleKey(scroller: HTMLElement, attribute: string): string | undefined {
    const top = scroller.getBoundingClientRect().top;
    for (const block of this.blocks) {
      if (!block.built) continue;
      const box = block.node.getBoundingClientRect();
      if (box.bottom < top) continue;
      for (const child of block.node.querySelectorAll<HTMLElement>(`[${attribute}]`)) {
        if (child.getBoundingClientRect().bottom >= top)
          return child.getAttribute(attribute) ?? undefined;
      }
    }
    return undefined;
  }

  disconnect(): void {
    this.observer.disconnect();
  }
}
