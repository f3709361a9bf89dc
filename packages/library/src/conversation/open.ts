import {
  openArchive,
  type ConversationArchive,
  type OpenArchiveOptions,
  type SaveResult,
} from "../archive/index.js";
import type { Item } from "../format/items.js";
import type { LiveConversation } from "./api.js";
import { createLiveConversation, type CreateOptions } from "./live-conversation.js";

export interface OpenLiveConversationOptions extends Omit<
  CreateOptions,
  "restore" | "onTurnStarted" | "onNewConversationConfirmed" | "keepConversation"
> {
  /** The archive's options: package kind, the keep-conversation setting. */
  readonly archive?: Omit<OpenArchiveOptions, "onChangedWithoutUndo">;
  /** The document's no-undo "edited" mark (A5); fired through the archive, never on open. */
  readonly onChangedWithoutUndo?: () => void;
}

export interface OpenedLiveConversation {
  readonly conversation: LiveConversation;
  readonly archive: ConversationArchive;
  /** Saves the conversation into the package (call at every document save, A5). */
  save(): Promise<SaveResult>;
}

/**
 * Opens a package's saved conversation (A10a) and wires it to the archive: the archive's notices
 * become panel notices, a turn start and a confirmed new conversation reach the archive (A14),
 * and conversation changes mark the document edited through the archive's no-undo hook, which
 * honours the keep-conversation setting (A5, A17).
 */
export async function openLiveConversation(
  packageDir: string,
  options: OpenLiveConversationOptions,
): Promise<OpenedLiveConversation> {
  const opened = await openArchive(packageDir, {
    ...options.archive,
    ...(options.onChangedWithoutUndo === undefined
      ? {}
      : { onChangedWithoutUndo: options.onChangedWithoutUndo }),
  });
  const archive = opened.archive;
  const notices: Item[] = opened.notices.map((notice, index) => ({
    id: `open-notice-${index + 1}`,
    type: "notice",
    kind: notice.kind,
    text: notice.text,
    detail: notice.reason,
  }));
  const settings = options.archive?.settings;
  const conversation = createLiveConversation({
    ...options,
    restore: { conversation: opened.conversation, images: opened.images, notices },
    onChange: (kind) => {
      archive.changedWithoutUndo();
      options.onChange?.(kind);
    },
    ...(settings === undefined ? {} : { keepConversation: () => settings().keepConversation }),
    onTurnStarted: () => archive.turnStarted(),
    onNewConversationConfirmed: () => archive.newConversationConfirmed(),
  });
  return {
    conversation,
    archive,
    save: () => archive.save(conversation.snapshot(), conversation.images()),
  };
}
