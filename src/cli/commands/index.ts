import type { Command } from "../command.js";
import { archiveCheck } from "./archive-check.js";
import { archiveResave } from "./archive-resave.js";
import { archiveShow } from "./archive-show.js";
import { cacheDiff } from "./cache-diff.js";
import { compact } from "./compact.js";
import { dbMigrate } from "./db-migrate.js";
import { formatCanonicalize } from "./format-canonicalize.js";
import { keysCreate, keysRevoke } from "./keys.js";
import { render } from "./render.js";
import { serve } from "./serve.js";
import { trajectoryProject } from "./trajectory-project.js";

/** Every `verbatim` command (docs/cli.md lists them). Add new commands here. */
export const commands: readonly Command[] = [formatCanonicalize, archiveShow, archiveCheck, archiveResave, dbMigrate, trajectoryProject, serve, keysCreate, keysRevoke, render, cacheDiff, compact];
