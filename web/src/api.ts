import type { ChatMLMessage } from "../../src/history/chatml.js";

/** The console routes' replies, as docs/openapi.json describes them. */
export type View = "stored" | "chatml" | "model-visible";

export interface ConversationSummary {
  readonly id: string;
  readonly subject_uid: string;
  readonly created_at: string;
  readonly message_count: number;
}

export interface JobSummary {
  readonly id: string;
  readonly subject_uid: string;
  readonly conversation_id: string | null;
  readonly status: string;
  readonly created_at: string;
}

export interface ListPage<T> {
  readonly data: readonly T[];
  readonly next_cursor: string | null;
}

export interface StoredMessage {
  readonly id: string;
  readonly type: string;
  readonly role: string;
  readonly status: string;
  readonly previous_message_id: string | null;
  readonly content: readonly unknown[];
  readonly metadata: unknown;
  readonly created_at: string;
}

export interface ProjectionMetadata {
  readonly redacted?: boolean;
  readonly content_truncated: boolean;
}

export interface MessagesPage {
  readonly view: View;
  readonly conversation_id: string;
  readonly messages: readonly (StoredMessage | ChatMLMessage)[];
  readonly metadata: ProjectionMetadata;
  readonly next_cursor: string | null;
}

export interface StoredItemRow {
  readonly position: number;
  readonly revision: number;
  readonly item_key: string;
  readonly item: { readonly type: string } & Record<string, unknown>;
}

export interface JobTurn {
  readonly id: string;
  readonly turn_index: number;
  readonly revision: number;
  readonly status: string;
  readonly trajectory: {
    readonly view: View;
    readonly items?: readonly StoredItemRow[];
    readonly messages?: readonly ChatMLMessage[];
    readonly metadata: ProjectionMetadata;
  };
}

export interface JobDetail {
  readonly job: JobSummary & Record<string, unknown>;
  readonly turns: readonly JobTurn[];
}

export class ConsoleClient {
  constructor(private readonly token: string) {}

  private async get<T>(path: string, query: Record<string, string | undefined>): Promise<T> {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && value !== "") search.set(key, value);
    }
    const url = search.size === 0 ? path : `${path}?${search.toString()}`;
    const response = await fetch(url, { headers: { authorization: `Bearer ${this.token}` } });
    const body = (await response.json()) as { error?: { message: string; code: string } };
    if (!response.ok) {
      throw new Error(`${body.error?.code ?? response.status}: ${body.error?.message ?? ""}`);
    }
    return body as T;
  }

  conversations(subject: string, cursor?: string): Promise<ListPage<ConversationSummary>> {
    return this.get("/ai-gateway/conversations", { subject_uid: subject, cursor });
  }

  jobs(subject: string, cursor?: string): Promise<ListPage<JobSummary>> {
    return this.get("/background-agent-jobs", { subject_uid: subject, cursor });
  }

  messages(id: string, view: View): Promise<MessagesPage> {
    return this.get(`/ai-gateway/conversations/${encodeURIComponent(id)}/messages`, {
      view,
      limit: "200",
    });
  }

  job(id: string, view: View): Promise<JobDetail> {
    return this.get(`/background-agent-jobs/${encodeURIComponent(id)}`, { view });
  }
}
