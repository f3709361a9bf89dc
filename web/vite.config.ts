import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The console page: built into packages/server/dist/web, which `verbatim serve` serves at `/`.
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/",
  build: {
    outDir: fileURLToPath(new URL("../packages/server/dist/web", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
  },
});
