// The process the crash test kills: opens a package, then saves a new conversation, announcing
// every step. `step N` mode kills itself with SIGKILL just before step N (N = the number of
// steps: just after the save); `random` mode prints each step so the parent, which kills it
// at a random moment, knows which step was hit.
import { readFileSync, writeSync } from "node:fs";
import { openArchiveWith } from "../../../packages/library/src/archive/archive.js";
import {
  atomicFileWriter,
  type StepHook,
} from "../../../packages/library/src/archive/file-writer.js";
import { decodeConversation } from "../../../packages/library/src/format/decode.js";
import { naiveFileWriter } from "./naive-writer.js";

interface Scenario {
  packageDir: string;
  conversation: string;
  images: [string, string][];
  turnStarted: boolean;
  writer: "atomic" | "naive";
  pieceBytes: number;
}

const [scenarioPath = "", mode = "", argument = "-1"] = process.argv.slice(2);
const scenario = JSON.parse(readFileSync(scenarioPath, "utf8")) as Scenario;
const target = mode === "step" ? Number(argument) : -1;
let count = 0;
const onStep: StepHook = (step) => {
  if (mode === "random") writeSync(1, `step ${step}\n`);
  if (count++ === target) process.kill(process.pid, "SIGKILL");
};
const options = { onStep, pieceBytes: scenario.pieceBytes };
const writer = scenario.writer === "naive" ? naiveFileWriter(options) : atomicFileWriter(options);
const decoded = decodeConversation(Buffer.from(scenario.conversation, "base64"));
if (!decoded.ok) throw new Error(decoded.reason.message);
const images = new Map(
  scenario.images.map(([sha256, base64]) => [
    sha256,
    new Uint8Array(Buffer.from(base64, "base64")),
  ]),
);
const opened = await openArchiveWith(scenario.packageDir, {}, { writer });
if (scenario.turnStarted) opened.archive.turnStarted();
if (mode === "random") writeSync(1, "ready\n");
await opened.archive.save(decoded.conversation, images);
if (count === target) process.kill(process.pid, "SIGKILL");
writeSync(1, "done\n");
