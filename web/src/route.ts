import { VIEWS, type View } from "./api.js";

/**
 * The page's addresses (history API): `/conversations`, `/conversations/:id`,
 * `/conversations/:id/messages/:messageId`, `/jobs`, `/jobs/:id`, `/jobs/:id/items/:itemKey`,
 * each with `?view=` and, for conversations, `?anchor=` (a branch). The operator token is never
 * part of an address.
 */
export type Section = "conversations" | "jobs";

export interface Route {
  readonly section: Section;
  readonly id?: string | undefined;
  /** A message of the conversation, or an item key of the job. */
  readonly target?: string | undefined;
  readonly view: View;
  readonly anchor?: string | undefined;
  /** List filters. */
  readonly subject?: string | undefined;
  readonly status?: string | undefined;
}

function decode(part: string | undefined): string | undefined {
  if (part === undefined || part === "") return undefined;
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

export function parseRoute(location: { pathname: string; search: string }): Route {
  const parts = location.pathname.split("/").filter((part) => part !== "");
  const query = new URLSearchParams(location.search);
  const viewParameter = query.get("view");
  const view = VIEWS.find((one) => one === viewParameter) ?? "stored";
  const section: Section = parts[0] === "jobs" ? "jobs" : "conversations";
  const targetWord = section === "jobs" ? "items" : "messages";
  return {
    section,
    id: decode(parts[1]),
    target: parts[2] === targetWord ? decode(parts[3]) : undefined,
    view,
    anchor: section === "conversations" ? (query.get("anchor") ?? undefined) : undefined,
    subject: query.get("subject") ?? undefined,
    status: query.get("status") ?? undefined,
  };
}

export function formatRoute(route: Route): string {
  let path = `/${route.section}`;
  if (route.id !== undefined) {
    path += `/${encodeURIComponent(route.id)}`;
    if (route.target !== undefined) {
      path += `/${route.section === "jobs" ? "items" : "messages"}/${encodeURIComponent(route.target)}`;
    }
  }
  const query = new URLSearchParams();
  if (route.view !== "stored") query.set("view", route.view);
  if (route.anchor !== undefined && route.section === "conversations") {
    query.set("anchor", route.anchor);
  }
  if (route.subject !== undefined && route.subject !== "") query.set("subject", route.subject);
  if (route.status !== undefined && route.status !== "") query.set("status", route.status);
  const search = query.toString();
  return search === "" ? path : `${path}?${search}`;
}
