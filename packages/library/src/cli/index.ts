/**
 * verbatim-llm/cli: the `verbatim` command line, run in-process (`main(argv, io)`; `bufferIO`
 * keeps what it writes). What a command is made with (argument parsing, exit codes, terminal
 * text, the import progress bar) is for the server package's commands: verbatim-llm/internal.
 */
export { main } from "./main.js";
export { bufferIO, type CliIO } from "./io.js";
