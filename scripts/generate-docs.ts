// Regenerates the documents that are made from code: docs/errors.md (from the error-code
// registry). Run with `npm run docs:generate`; tests fail when a checked-in file drifts.
import { writeFileSync } from "node:fs";
import { generatedDocuments } from "./generated-documents.js";

for (const document of generatedDocuments()) {
  writeFileSync(new URL(`../${document.path}`, import.meta.url), await document.content());
  process.stdout.write(`wrote ${document.path}\n`);
}
