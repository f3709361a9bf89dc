import { gatewayMessagesMigration } from "./0001-gateway-messages.js";
import { serverApiKeysMigration } from "./0002-server-api-keys.js";
import { backgroundAgentJobsMigration } from "./0003-background-agent-jobs.js";
import { apiKeyNotificationsMigration } from "./0004-api-key-notifications.js";
import { messageRequestSettingsMigration } from "./0005-message-request-settings.js";
import { responseLeasesMigration } from "./0006-response-leases.js";
import { consoleSearchMigration } from "./0007-console-search.js";
import { callerDeletionsMigration } from "./0008-caller-deletions.js";
import { recordedCallsMigration } from "./0009-recorded-calls.js";
import { chainNodeMessagesMigration } from "./0010-chain-node-messages.js";
import { gatewayImagesMigration } from "./0011-gateway-images.js";
import { recordedHistoryBackfillMigration } from "./0012-recorded-history-backfill.js";
import { searchIndexDeferralMigration } from "./0013-search-index-deferral.js";
import { searchIndexHashSizeMigration } from "./0014-search-index-hash-size.js";
import { recordedBodyPiecesMigration } from "./0015-recorded-body-pieces.js";
import { recordedCallsBySubjectMigration } from "./0016-recorded-calls-by-subject.js";
import { consoleListsAndSearchMigration } from "./0017-console-lists-and-search.js";
import { sharedRateLimitsMigration } from "./0018-shared-rate-limits.js";
import { serverCoordinationMigration } from "./0019-server-coordination.js";
import { recordedBodyPacksMigration } from "./0020-recorded-body-packs.js";
import { subjectKeysMigration } from "./0021-subject-keys.js";
import { conversationCountsPerSubjectMigration } from "./0022-conversation-counts-per-subject.js";
import { phraseTrigramsMigration } from "./0023-phrase-trigrams.js";
import { searchPendingListMigration } from "./0024-search-pending-list.js";
import type { Migration } from "./migration.js";

/**
 * Every migration, in the order they run. Append new ones at the end (never reorder, rename
 * or edit an applied one): `0002-…` goes after `0001-…`.
 */
export const storeMigrations: readonly Migration[] = [
  gatewayMessagesMigration,
  serverApiKeysMigration,
  backgroundAgentJobsMigration,
  apiKeyNotificationsMigration,
  messageRequestSettingsMigration,
  responseLeasesMigration,
  consoleSearchMigration,
  callerDeletionsMigration,
  recordedCallsMigration,
  chainNodeMessagesMigration,
  gatewayImagesMigration,
  recordedHistoryBackfillMigration,
  searchIndexDeferralMigration,
  searchIndexHashSizeMigration,
  recordedBodyPiecesMigration,
  recordedCallsBySubjectMigration,
  consoleListsAndSearchMigration,
  sharedRateLimitsMigration,
  serverCoordinationMigration,
  recordedBodyPacksMigration,
  subjectKeysMigration,
  conversationCountsPerSubjectMigration,
  phraseTrigramsMigration,
  searchPendingListMigration,
];
