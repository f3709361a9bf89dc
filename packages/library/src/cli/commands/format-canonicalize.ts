import { decodeConversation } from "../../format/decode.js";
import { encodeConversation } from "../../format/encode.js";
import { EXIT_CHECK_FAILED, EXIT_OK, parseCommandArgs, type Command } from "../command.js";
import { readInputFile } from "../paths.js";

export const formatCanonicalize: Command = {
  words: ["format", "canonicalize"],
  usage: "<conversation.json>",
  summary: "Decode a conversation.json (format 1) and write its canonical bytes to stdout.",
  async run(args, io) {
    const { positionals } = parseCommandArgs(this, args, {}, { min: 1, max: 1 });
    const path = positionals[0] ?? "";
    const result = decodeConversation(await readInputFile(io.cwd, path));
    if (!result.ok) {
      io.stderr(`${path}: unreadable: ${result.reason.message}\n`);
      return EXIT_CHECK_FAILED;
    }
    io.stdout(encodeConversation(result.conversation));
    return EXIT_OK;
  },
};
