import type { ErrorCodeDefinition } from "./codes/define.js";
import { archiveCodes } from "./codes/archive.js";
import { cliAgentsCodes } from "./codes/cli-agents.js";
import { conversationCodes } from "./codes/conversation.js";
import { formatCodes } from "./codes/format.js";
import { gatewayCodes } from "./codes/gateway.js";
import { generalCodes } from "./codes/general.js";
import { pricingCodes } from "./codes/pricing.js";
import { providersCodes } from "./codes/providers.js";
import { serverCodes } from "./codes/server.js";
import { storeCodes } from "./codes/store.js";
import { trajectoryCodes } from "./codes/trajectory.js";

/** Every error code verbatim can raise, grouped by the layer that raises it (docs/errors.md). */
export const errorCodeGroups = {
  general: generalCodes,
  format: formatCodes,
  archive: archiveCodes,
  pricing: pricingCodes,
  providers: providersCodes,
  conversation: conversationCodes,
  "cli-agents": cliAgentsCodes,
  trajectory: trajectoryCodes,
  store: storeCodes,
  gateway: gatewayCodes,
  server: serverCodes,
} as const;

type Group = (typeof errorCodeGroups)[keyof typeof errorCodeGroups];
/** The union of every registered code. */
export type ErrorCode = Group[number]["code"];

const registry = new Map<string, ErrorCodeDefinition>();
for (const group of Object.values(errorCodeGroups)) {
  for (const definition of group as readonly ErrorCodeDefinition[]) {
    if (registry.has(definition.code)) {
      throw new Error(`error code ${definition.code} is registered twice`);
    }
    registry.set(definition.code, definition);
  }
}

export function errorCodeDefinition(code: ErrorCode): ErrorCodeDefinition {
  const definition = registry.get(code);
  if (definition === undefined) throw new Error(`unregistered error code ${code}`);
  return definition;
}

export function allErrorCodes(): readonly ErrorCodeDefinition[] {
  return [...registry.values()];
}

/** The HTTP status a code maps to (one map for the whole server). */
export function httpStatusOf(code: ErrorCode): number {
  return errorCodeDefinition(code).httpStatus;
}
