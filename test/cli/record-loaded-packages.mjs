// `node --import ./record-loaded-packages.mjs …`: on exit, writes the name of every npm package
// the process resolved a module of, one a line, to the file VERBATIM_RECORD_PACKAGES names.
// Used by test/cli to check that a command loads only what it needs.
import { writeFileSync } from "node:fs";
import { register } from "node:module";

const channel = new MessageChannel();
const resolved = new Set();
const hook = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  port.postMessage(result.url);
  return result;
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`, {
  parentURL: import.meta.url,
  data: { port: channel.port2 },
  transferList: [channel.port2],
});
channel.port1.on("message", (url) => {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (match !== null) resolved.add(match[1]);
});
channel.port1.unref();
process.on("exit", () => {
  const target = process.env["VERBATIM_RECORD_PACKAGES"];
  if (target !== undefined) writeFileSync(target, [...resolved].sort().join("\n") + "\n");
});
