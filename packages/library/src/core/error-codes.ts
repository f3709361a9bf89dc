import type { ErrorCodeDefinition } from "./codes/define.js";
import { archiveCodes } from "./codes/archive.js";
import { cliAgentsCodes } from "./codes/cli-agents.js";
import { conversationCodes } from "./codes/conversation.js";
import { formatCodes } from "./codes/format.js";
import { generalCodes } from "./codes/general.js";
import { pricingCodes } from "./codes/pricing.js";
import { providersCodes } from "./codes/providers.js";
import { trajectoryCodes } from "./codes/trajectory.js";

/**
 * The error codes the type checker knows, one list per layer, by the layer's name. The library
 * declares its own layers here; a package with layers of its own adds them by declaration
 * merging (`declare module "verbatim-llm/core" { interface ErrorCodeGroups { store: typeof
 * storeCodes } }`) and registers the same lists at run time with registerErrorCodes.
 */
export interface ErrorCodeGroups {
  readonly general: typeof generalCodes;
  readonly format: typeof formatCodes;
  readonly archive: typeof archiveCodes;
  readonly pricing: typeof pricingCodes;
  readonly providers: typeof providersCodes;
  readonly conversation: typeof conversationCodes;
  readonly "cli-agents": typeof cliAgentsCodes;
  readonly trajectory: typeof trajectoryCodes;
}

type CodesOf<Codes> = Codes extends readonly { readonly code: infer Code }[] ? Code : never;

/** The union of every code of ErrorCodeGroups: what a VerbatimError may carry. */
export type ErrorCode = CodesOf<ErrorCodeGroups[keyof ErrorCodeGroups]>;

const groups = new Map<keyof ErrorCodeGroups, readonly ErrorCodeDefinition[]>();
const registry = new Map<
  string,
  { readonly group: string; readonly definition: ErrorCodeDefinition }
>();

function sameDefinitions(
  left: readonly ErrorCodeDefinition[],
  right: readonly ErrorCodeDefinition[],
): boolean {
  return (
    left.length === right.length &&
    left.every((definition, index) => {
      const other = right[index];
      return (
        other !== undefined &&
        definition.code === other.code &&
        definition.httpStatus === other.httpStatus &&
        definition.meaning === other.meaning &&
        definition.remedy === other.remedy
      );
    })
  );
}

/** Why `definition` cannot be registered, or undefined when it can. */
function definitionFault(definition: ErrorCodeDefinition): string | undefined {
  if (!/^[a-z][a-z0-9_]*$/.test(definition.code)) return "its code is not in snake case";
  const status = definition.httpStatus;
  if (!Number.isInteger(status) || status < 400 || status > 599) {
    return "its HTTP status is not an integer from 400 to 599";
  }
  if (definition.meaning.trim() === "" || definition.remedy.trim() === "") {
    return "its meaning or remedy is empty";
  }
  return undefined;
}

/**
 * Registers the error codes of one layer, so that errorCodeDefinition, httpStatusOf and
 * allErrorCodes know them; the layer's name and list must be declared in ErrorCodeGroups. A code
 * registered twice throws, as does a group registered again with different codes; registering a
 * group again with the same codes (a second copy of its package in the process) changes nothing.
 */
export function registerErrorCodes<const Group extends keyof ErrorCodeGroups>(
  group: Group,
  codes: ErrorCodeGroups[Group],
): void {
  const definitions: readonly ErrorCodeDefinition[] = codes;
  const registered = groups.get(group);
  if (registered !== undefined) {
    if (sameDefinitions(registered, definitions)) return;
    throw new Error(
      `error code group "${group}" is registered twice with different codes: two versions of the package that owns it are loaded; install one`,
    );
  }
  for (const [index, definition] of definitions.entries()) {
    const fault = definitionFault(definition);
    if (fault !== undefined) {
      throw new Error(
        `error code ${definition.code} (group "${group}", entry ${index}) cannot be registered: ${fault}`,
      );
    }
    const repeated = definitions.slice(0, index).some((other) => other.code === definition.code);
    const earlier = registry.get(definition.code)?.group ?? (repeated ? group : undefined);
    if (earlier !== undefined) {
      throw new Error(
        `error code ${definition.code} is registered twice (group "${earlier}" and group "${group}"): give one of them another code`,
      );
    }
  }
  groups.set(group, definitions);
  for (const definition of definitions) registry.set(definition.code, { group, definition });
}

registerErrorCodes("general", generalCodes);
registerErrorCodes("format", formatCodes);
registerErrorCodes("archive", archiveCodes);
registerErrorCodes("pricing", pricingCodes);
registerErrorCodes("providers", providersCodes);
registerErrorCodes("conversation", conversationCodes);
registerErrorCodes("cli-agents", cliAgentsCodes);
registerErrorCodes("trajectory", trajectoryCodes);

/**
 * The registered error codes by layer, in the order the layers registered them: the library's
 * own, then those of each package loaded in the process (docs/errors.md lists them all).
 */
export function errorCodeGroups(): ReadonlyMap<
  keyof ErrorCodeGroups,
  readonly ErrorCodeDefinition[]
> {
  return new Map(groups);
}

/** The registered definition of one error code. */
export function errorCodeDefinition(code: ErrorCode): ErrorCodeDefinition {
  const definition = registry.get(code)?.definition;
  if (definition === undefined) {
    throw new Error(
      `error code ${code} is not registered: the package that owns it registers its codes when one of its entry points is imported; import it first`,
    );
  }
  return definition;
}

/** Every registered error code. */
export function allErrorCodes(): readonly ErrorCodeDefinition[] {
  return [...registry.values()].map((entry) => entry.definition);
}

/** The HTTP status a code maps to (one map for the whole server). */
export function httpStatusOf(code: ErrorCode): number {
  return errorCodeDefinition(code).httpStatus;
}
