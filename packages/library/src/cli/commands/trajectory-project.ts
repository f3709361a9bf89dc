import { decodeJsonBytes } from "../../core/strict-json.js";
import {
  fitPageToLimit,
  modelVisibleTrajectory,
  parseStoredRowsJsonl,
  projectTrajectoryToChatML,
  type ProjectedMessages,
} from "../../trajectory/index.js";
import {
  EXIT_CHECK_FAILED,
  EXIT_OK,
  parseCommandArgs,
  usageError,
  type Command,
} from "../command.js";
import { readInputFile } from "../paths.js";

const VIEWS = ["chatml", "model-visible"] as const;
type View = (typeof VIEWS)[number];

export const trajectoryProject: Command = {
  words: ["trajectory", "project"],
  usage: "<file> --view chatml|model-visible [--page-limit BYTES]",
  summary:
    "Project stored job turn items (JSON Lines, one stored row per line) to ChatML or the model-visible view.",
  async run(args, io) {
    const { positionals, values } = parseCommandArgs(
      this,
      args,
      { view: { type: "string" }, "page-limit": { type: "string" } },
      { min: 1, max: 1 },
    );
    const path = positionals[0] ?? "";
    const view = values.view;
    if (view === undefined) throw usageError(this, "--view is required");
    if (!(VIEWS as readonly string[]).includes(view)) {
      throw usageError(this, `--view must be chatml or model-visible, got ${JSON.stringify(view)}`);
    }
    const limitText = values["page-limit"];
    let limit: number | undefined;
    if (limitText !== undefined) {
      limit = Number(limitText);
      if (!/^[0-9]+$/.test(limitText) || !Number.isSafeInteger(limit)) {
        throw usageError(
          this,
          `--page-limit must be a whole number of bytes, got ${JSON.stringify(limitText)}`,
        );
      }
    }

    const decoded = decodeJsonBytes(await readInputFile(io.cwd, path));
    if (!decoded.ok) {
      io.stderr(`${path}: unreadable: ${decoded.message}\n`);
      return EXIT_CHECK_FAILED;
    }
    const { rows, problems } = parseStoredRowsJsonl(decoded.text);
    if (problems.length > 0) {
      for (const problem of problems) io.stderr(`${path}:${problem.line}: ${problem.message}\n`);
      io.stderr(`${path}: ${problems.length} bad line(s); nothing projected\n`);
      return EXIT_CHECK_FAILED;
    }
    const chatml = projectTrajectoryToChatML(rows);
    let output: ProjectedMessages =
      (view as View) === "chatml" ? chatml : modelVisibleTrajectory(chatml);
    if (limit !== undefined) output = fitPageToLimit(output, { limitBytes: limit });
    io.stdout(JSON.stringify(output) + "\n");
    return EXIT_OK;
  },
};
