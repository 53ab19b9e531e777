// What an agent reads of a stored snapshot: one page of its tree text
// (compact or full), within a budget of nodes and bytes. Pages are cut at
// node positions (pre-order), so an offset means the same node in either
// format, and the next page of a stored snapshot needs no new tree read.
import type { Element, Snapshot, StoredNode } from "./snapshot.ts";

export type ViewFormat = "compact" | "full";

export interface ViewOptions {
  format: ViewFormat;
  /** Most nodes in the page (null: no limit). */
  maxNodes: number | null;
  /** Most bytes of tree text (and, full, of elements) in the page (null: no limit). */
  maxBytes: number | null;
  /** The node position the page starts at. */
  offset: number;
  /** Lines carry screen bounds and advertised actions. */
  withBounds: boolean;
}

export interface Page {
  format: ViewFormat;
  treeText: string;
  /** Full format: the page's elements. */
  elements?: Element[];
  offset: number;
  /** The next page's offset; absent on the last page. */
  nextOffset?: number;
  /** The page budget cut the output (or the tree read was cut: Snapshot.truncated). */
  truncated: boolean;
  budget: { maxNodes: number | null; maxBytes: number | null };
  /** The last node position this page covers (offset - 1 when it is empty). */
  lastPosition: number;
}

/** An element's screen bounds and actions as a line suffix: ` @x,y wxh [press, toggle]`. */
function boundsSuffix(el: Element | undefined): string {
  if (!el) return "";
  let s = "";
  if (el.bounds) s += ` @${el.bounds.x},${el.bounds.y} ${el.bounds.width}x${el.bounds.height}`;
  if (el.actions.length) s += ` [${el.actions.join(", ")}]`;
  return s;
}

/** One node's line: indent, [index], text, with bounds its bounds and actions; text read by OCR says so (it is acted on by point only). */
export function lineOf(node: StoredNode, depth: number, el: Element | undefined, withBounds: boolean): string {
  return "  ".repeat(depth) + (node.e !== undefined ? `[${node.e}] ` : "") + node.t + (withBounds ? boundsSuffix(el) : "") + (el?.source === "ocr" ? " (ocr)" : "");
}

/** The elements of a snapshot by index. */
export function elementsByIndex(s: Pick<Snapshot, "elements">): Map<number, Element> {
  return new Map(s.elements.map((e) => [e.index, e]));
}

/**
 * One page of a snapshot. The first node of a page is always shown (a page
 * never comes back empty while nodes are left); after it, a node that would
 * pass the budget ends the page, and its position is the next offset.
 */
export function renderPage(s: Pick<Snapshot, "nodes" | "elements" | "truncated">, o: ViewOptions): Page {
  const byIndex = elementsByIndex(s);
  const lines: string[] = [];
  const elements: Element[] = [];
  let bytes = 0;
  let count = 0;
  let lastPosition = o.offset - 1;
  let nextOffset: number | undefined;
  for (let pos = Math.max(0, o.offset); pos < s.nodes.length; pos++) {
    const node = s.nodes[pos]!;
    const depth = o.format === "compact" ? node.k : node.d;
    if (depth === undefined) {
      lastPosition = pos;
      continue;
    }
    const el = node.e !== undefined ? byIndex.get(node.e) : undefined;
    const line = lineOf(node, depth, el, o.withBounds);
    let cost = Buffer.byteLength(line, "utf8") + 1;
    if (o.format === "full" && el) cost += Buffer.byteLength(JSON.stringify(el), "utf8") + 1;
    if (count > 0 && ((o.maxNodes !== null && count + 1 > o.maxNodes) || (o.maxBytes !== null && bytes + cost > o.maxBytes))) {
      nextOffset = pos;
      break;
    }
    lines.push(line);
    if (o.format === "full" && el) elements.push(el);
    bytes += cost;
    count++;
    lastPosition = pos;
  }
  return {
    format: o.format,
    treeText: lines.join("\n"),
    ...(o.format === "full" ? { elements } : {}),
    offset: o.offset,
    ...(nextOffset !== undefined ? { nextOffset } : {}),
    truncated: nextOffset !== undefined || s.truncated,
    budget: { maxNodes: o.maxNodes, maxBytes: o.maxBytes },
    lastPosition,
  };
}

/** The position of an element's node in its snapshot, or -1. */
export function positionOf(s: Pick<Snapshot, "nodes">, index: number): number {
  return s.nodes.findIndex((n) => n.e === index);
}
