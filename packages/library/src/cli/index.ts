export { main } from "./main.js";
export {
  EXIT_CHECK_FAILED,
  EXIT_OK,
  EXIT_USAGE,
  parseCommandArgs,
  usageError,
  type Command,
} from "./command.js";
export { bufferIO, processIO, type CliIO } from "./io.js";
export { readInputFile } from "./paths.js";
export { terminalLine, terminalLines } from "./terminal-text.js";
export { importProgressBar, type ImportProgressBar } from "./progress-bar.js";
export { JOBS_TARGET, parseJobs } from "./jobs-option.js";
export type { ServerCommandName } from "./server-commands.js";
