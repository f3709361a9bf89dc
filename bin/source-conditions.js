// A module resolve hook for this checkout: package imports (`verbatim-llm/core`, …) resolve
// through the packages' "verbatim-source" export condition to their TypeScript sources, as the
// type checker and Vitest do (the published packages resolve to dist/).
export async function resolve(specifier, context, nextResolve) {
  const conditions = context.conditions.includes("verbatim-source")
    ? context.conditions
    : ["verbatim-source", ...context.conditions];
  return nextResolve(specifier, { ...context, conditions });
}
