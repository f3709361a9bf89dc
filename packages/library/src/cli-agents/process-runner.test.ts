import { describe, expect, it } from "vitest";
import { runCliProcess } from "./process-runner.js";

// Real child processes (node -e …), no mocks.
const node = process.execPath;

describe("CLI process runner", () => {
  it("hands over whole lines however the output is chunked: CRLF, blank lines, a last line without newline", async () => {
    const lines: string[] = [];
    const script =
      'process.stdout.write("{\\"a\\":"); setTimeout(() => { process.stdout.write("1}\\r\\n\\n  \\n{\\"é\\":2}\\n{\\"c\\"") ; process.stdout.write(":3}"); }, 50)';
    const result = await runCliProcess({
      command: node,
      args: ["-e", script],
      stdin: "",
      onLine: (line) => lines.push(line),
    });
    expect(result.outcome).toBe("exited");
    expect(result.exitCode).toBe(0);
    expect(lines).toEqual(['{"a":1}', '{"é":2}', '{"c":3}']);
  });

  it("writes the message to standard input and keeps standard error", async () => {
    const lines: string[] = [];
    const script =
      'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{console.log(JSON.stringify(s));console.error("warn: "+s.length);process.exit(4)})';
    const message = `# Conversation so far\n${"z".repeat(100_000)}\n\nhello`;
    const result = await runCliProcess({
      command: node,
      args: ["-e", script],
      stdin: message,
      onLine: (line) => lines.push(line),
    });
    expect(lines).toEqual([JSON.stringify(message)]);
    expect(result).toMatchObject({
      outcome: "exited",
      exitCode: 4,
      stderr: `warn: ${message.length}\n`,
    });
  });

  it("a missing executable is `notFound`, not an exception", async () => {
    const result = await runCliProcess({
      command: "verbatim-no-such-cli",
      args: [],
      stdin: "x",
      onLine: () => undefined,
    });
    expect(result.outcome).toBe("notFound");
    expect(result.startError).toContain("ENOENT");
  });

  it("an already aborted signal starts nothing", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await runCliProcess({
      command: node,
      args: ["-e", "1"],
      stdin: "",
      signal: controller.signal,
      onLine: () => undefined,
    });
    expect(result.outcome).toBe("cancelled");
    expect(result.pid).toBeUndefined();
  });

  it("a process that ignores SIGTERM is ended with SIGKILL after the grace period", async () => {
    const controller = new AbortController();
    const script = 'process.on("SIGTERM",()=>{});console.log("{}");setInterval(()=>{},1000)';
    const started = Date.now();
    const result = await runCliProcess({
      command: node,
      args: ["-e", script],
      stdin: "",
      signal: controller.signal,
      killGraceMs: 300,
      onLine: () => controller.abort(),
    });
    expect(result.outcome).toBe("cancelled");
    expect(result.signal).toBe("SIGKILL");
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });
});
