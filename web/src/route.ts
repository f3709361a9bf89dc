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
  /** List filters: subject prefix, model, job status, dates (YYYY-MM-DD, inclusive). */
  readonly subject?: string | undefined;
  readonly status?: string | undefined;
  readonly model?: string | undefined;
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  /** A full-text search across conversations and jobs (the list shows its results). */
  readonly q?: string | undefined;
}

export const FILTER_KEYS = ["subject", "status", "model", "from", "to", "q"] as const;

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
    ...Object.fromEntries(FILTER_KEYS.map((key) => [key, query.get(key) || undefined] as const)),
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
  for (const key of FILTER_KEYS) {
    const value = route[key];
    if (value === undefined || value === "") continue;
    if (key === "status" && route.section !== "jobs") continue;
    query.set(key, value);
  }
  const search = query.toString();
  return search === "" ? path : `${path}?${search}`;
}
