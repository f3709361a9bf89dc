import { defineCodes } from "./define.js";

export const generalCodes = defineCodes([
  {
    code: "invalid_argument",
    httpStatus: 400,
    meaning: "A value passed to a function or command is not of the expected shape.",
    remedy: "Read the message for the field and the expected shape, and pass a valid value.",
  },
  {
    code: "invalid_json",
    httpStatus: 400,
    meaning: "Text that must be JSON is not valid JSON, or repeats a key inside one object.",
    remedy: "Fix the JSON at the reported position (line, column and JSON path are given).",
  },
  {
    code: "non_canonical_value",
    httpStatus: 500,
    meaning:
      "A value cannot be written as canonical JSON (NaN, Infinity, undefined in an array, a function, a cycle).",
    remedy:
      "Pass only JSON values: finite numbers, strings, booleans, null, arrays, plain objects and Maps.",
  },
  {
    code: "internal_error",
    httpStatus: 500,
    meaning: "An unexpected failure inside verbatim.",
    remedy: "Report it with the message and the steps that led to it.",
  },
  {
    code: "usage_error",
    httpStatus: 400,
    meaning: "A command was called with missing or unknown arguments.",
    remedy: "Run the command with --help and call it as documented in docs/cli.md.",
  },
  {
    code: "path_not_found",
    httpStatus: 404,
    meaning:
      "A file or folder named on the command line or in a call does not exist or cannot be read.",
    remedy: "Check the path and its permissions.",
  },
  {
    code: "server_package_missing",
    httpStatus: 500,
    meaning:
      "A command of the server package (serve, keys, db migrate) was run where only the library (verbatim-llm) is installed.",
    remedy:
      "Install verbatim-llm-server beside verbatim-llm, or run the command with npx verbatim-llm-server.",
  },
  {
    code: "port_unavailable",
    httpStatus: 500,
    meaning:
      "`verbatim serve` cannot listen on the address and port it was given: another program uses the port, the port needs privileges, or the host is not an address of this machine.",
    remedy:
      "Stop the program that uses the port, or pass another one with --port (`npm start -- --port 9000`; --port 0 picks a free port); check --host.",
  },
]);
