// The layer rules of docs/architecture.md, enforced: each layer may import only the layers
// listed for it (and itself); no import cycles anywhere.
const allowed = {
  core: [],
  history: ["core"],
  format: ["core", "history"],
  archive: ["core", "history", "format"],
  pricing: ["core"],
  providers: ["core", "history", "pricing"],
  conversation: ["core", "history", "format", "archive", "pricing", "providers"],
  "cli-agents": ["core", "history", "format", "archive", "pricing", "providers", "conversation"],
  trajectory: ["core", "history"],
  store: ["core", "history", "trajectory"],
  gateway: ["core", "history", "trajectory", "store", "providers", "pricing"],
  server: ["core", "history", "trajectory", "store", "gateway", "providers", "pricing"],
  interop: ["core", "history", "format", "archive", "trajectory"],
};
const layers = [...Object.keys(allowed), "cli"];

const forbidden = [
  {
    name: "no-circular",
    severity: "error",
    comment: "Import cycles make layers impossible to reason about.",
    from: {},
    to: { circular: true },
  },
  ...Object.entries(allowed).map(([layer, may]) => ({
    name: `layer-${layer}`,
    severity: "error",
    comment: `src/${layer} may import only: ${may.join(", ") || "nothing outside itself"}`,
    from: { path: `^packages/(library|server)/src/${layer}/` },
    to: {
      path: `^packages/(library|server)/src/(${layers.filter((l) => l !== layer && !may.includes(l)).join("|")})/`,
    },
  })),
  {
    name: "gateway-no-http-framework",
    severity: "error",
    comment:
      "The gateway's services (and the store below them) know nothing of HTTP serving: no Fastify, its requests or replies. A server route parses HTTP, calls the gateway and writes the reply; the layer rule layer-gateway keeps server/ out.",
    from: { path: "^packages/server/src/(store|gateway)/" },
    to: { path: "(^|/)node_modules/(fastify|@fastify/[^/]+)/" },
  },
  {
    name: "cli-and-server-open-the-database-only",
    severity: "error",
    comment:
      "A command parses flags, calls the gateway and prints; a route parses HTTP, calls the gateway and writes the reply. Of the store either may only open, migrate or partition a database (store/database, store/location, store/migrate, store/partitions); everything else it asks the gateway for.",
    from: { path: "^packages/server/src/(cli|server)/", pathNot: "\\.test\\.ts$" },
    to: {
      path: "^packages/server/src/store/",
      pathNot: "^packages/server/src/store/(database|location|migrate|partitions)\\.ts$",
    },
  },
  {
    name: "library-never-imports-server",
    severity: "error",
    comment: "The library package stands alone: it never imports the server package.",
    from: { path: "^packages/library/" },
    to: { path: "^packages/server/" },
  },
  {
    name: "sql-only-in-store",
    severity: "error",
    comment:
      "Every SQL statement lives in packages/server/src/store (repositories): no other server source imports kysely's values (its types, for a transaction's handle, are allowed).",
    from: {
      path: "^packages/server/src/",
      pathNot: ["^packages/server/src/store/", "\\.test\\.ts$"],
    },
    to: { path: "(^|/)node_modules/kysely/", dependencyTypesNot: ["type-only"] },
  },
  {
    name: "web-no-server-code",
    severity: "error",
    comment: "The console page talks HTTP only; it may import types, never server code.",
    from: { path: "^web/" },
    to: { path: "^packages/server/src/", dependencyTypesNot: ["type-only"] },
  },
];

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: "node_modules" },
    // Packages stay in the graph as leaves (not followed), so a rule can name one (kysely).
    exclude: { path: "^packages/library/dist/|^packages/server/dist/|^dist/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      extensions: [".ts", ".js", ".json"],
      conditionNames: ["verbatim-source", "import", "types", "default"],
    },
  },
};
