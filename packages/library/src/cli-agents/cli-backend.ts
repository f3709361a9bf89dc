import { type ErrorCode, VerbatimError } from "../core/index.js";
import type { CliBackend, CliCost, CliTurnInput, CliTurnResult } from "../conversation/index.js";
import { restoredSessionMessage } from "../conversation/backend.js";
import type { Item } from "../format/index.js";
import type { Usage } from "../pricing/types.js";
import type { Message } from "../history/index.js";
import { type CliProcessResult, runCliProcess } from "./process-runner.js";
import type { AgentStreamEvent, AgentStreamParser, ItemIdFactory } from "./stream-events.js";
import { addUsage } from "../pricing/index.js";

/** One line of a CLI backend's log: what a host may write to its own log file. */
export type CliLogEntry =
  /** The turn's usual message: never the preamble a restored session gets (A25). */
  | { readonly kind: "user"; readonly text: string }
  /** The process started; `args` never hold the message (it goes on standard input). */
  | { readonly kind: "start"; readonly command: string; readonly args: readonly string[] }
  /** One line the CLI wrote on standard output. */
  | { readonly kind: "output"; readonly line: string }
  /** How the process ended, with the tail of its standard error. */
  | {
      readonly kind: "end";
      readonly outcome: CliProcessResult["outcome"];
      readonly exitCode: number | null;
      readonly stderr: string;
    };

/** How the CLI is paid for, which decides the cost kind of its turns. */
export type CliBilling =
  /** Decide from what the CLI reports, else from the environment (docs/cli-agents.md). */
  | "auto"
  /** Signed in with a subscription: cost `notBilled`. */
  | "subscription"
  /** An API key: cost `reported` when the CLI reports dollars, else `unknown`. */
  | "apiKey";

/** Options both CLI backends take. */
export interface CliAgentOptions {
  /** The executable: a name looked up on PATH, or a path. */
  readonly command?: string;
  /** Passed as `--model`; otherwise the CLI's own default, recorded as `default`. */
  readonly model?: string;
  /** More arguments for every run (permission mode, sandbox, …), before the session options. */
  readonly extraArgs?: readonly string[];
  readonly cwd?: string;
  /** The environment of the CLI process (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  readonly billing?: CliBilling;
  /** Receives the run's log lines (docs/cli-agents.md): the user line is the usual message. */
  readonly log?: (entry: CliLogEntry) => void;
  /** Grace between SIGTERM and SIGKILL when a turn is cancelled. Default 2000 ms. */
  readonly killGraceMs?: number;
}

/** What differs between Claude Code and Codex. */
export interface CliDialect {
  /** `provider` recorded for turns: `claude-code` or `codex`. */
  readonly provider: string;
  /** The name messages use: `Claude Code`, `Codex`. */
  readonly name: string;
  readonly defaultCommand: string;
  /** How to install it, for the missing-binary message. */
  readonly installHint: string;
  /** The arguments of a run: a new session when `session` is undefined, else resume it. */
  args(options: CliAgentOptions, session: string | undefined): string[];
  newParser(newId: ItemIdFactory): AgentStreamParser & {
    unfinishedTools(status: "failed" | "cancelled"): AgentStreamEvent[];
  };
  /** Whether, with nothing reported by the CLI, the environment points to a subscription. */
  subscriptionFromEnvironment(env: NodeJS.ProcessEnv): boolean;
}

const ZERO_USAGE: Usage = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  webSearchRequests: 0,
};

/**
 * A conversation backend that runs each turn as one process of an agent CLI (A25): it keeps the
 * CLI's session id for the later turns of the same open conversation and resumes it; on the
 * first turn after reopening (when the conversation passes `restoredTranscript`) it starts a new
 * session whose message is `restoredSessionMessage(transcript, message)`. The preamble goes to
 * the CLI's standard input only: the reported history holds the user message and the final
 * assistant text, the log's user line the usual message.
 */
export class CliAgentBackend implements CliBackend {
  readonly kind = "cli";
  readonly provider: string;
  readonly model: string;
  private session: string | undefined;
  /** A restored transcript whose turn ended before the CLI opened a session. */
  private pendingTranscript: string | undefined;
  /** Why the last turn failed, with its error code (docs/errors.md); undefined after a success. */
  lastFailure: VerbatimError | undefined;

  constructor(
    private readonly dialect: CliDialect,
    private readonly options: CliAgentOptions = {},
  ) {
    this.provider = dialect.provider;
    this.model = options.model ?? "default";
  }

  /** The CLI session (Claude Code) or thread (Codex) the next turn resumes, if any. */
  get sessionId(): string | undefined {
    return this.session;
  }

  reset(): void {
    this.session = undefined;
    this.pendingTranscript = undefined;
  }

  async runTurn(input: CliTurnInput): Promise<CliTurnResult> {
    // A25: the CLI's own session cannot outlive the document; a restored turn starts afresh.
    // When that turn failed before the CLI opened a session, the next one still carries it.
    const restored =
      input.restoredTranscript ?? (this.session === undefined ? this.pendingTranscript : undefined);
    if (input.restoredTranscript !== undefined) this.session = undefined;
    const cliMessage =
      restored === undefined || restored === ""
        ? input.message
        : restoredSessionMessage(restored, input.message);
    const resumed = this.session;
    const command = this.options.command ?? this.dialect.defaultCommand;
    const args = this.dialect.args(this.options, resumed);
    const log = this.options.log ?? (() => undefined);
    log({ kind: "user", text: input.message });
    log({ kind: "start", command, args });

    const parser = this.dialect.newParser(input.newItemId);
    const turn = new TurnCollector(input.onItem);
    const run = await runCliProcess({
      command,
      args,
      stdin: cliMessage,
      ...(this.options.cwd === undefined ? {} : { cwd: this.options.cwd }),
      ...(this.options.env === undefined ? {} : { env: this.options.env }),
      signal: input.signal,
      ...(this.options.killGraceMs === undefined ? {} : { killGraceMs: this.options.killGraceMs }),
      onLine: (line) => {
        log({ kind: "output", line });
        turn.linesRead += 1;
        for (const event of parser.push(line)) turn.take(event);
      },
    });
    log({ kind: "end", outcome: run.outcome, exitCode: run.exitCode, stderr: run.stderr });
    if (turn.session !== undefined) this.session = turn.session;
    this.pendingTranscript = this.session === undefined ? restored : undefined;

    const env = this.options.env ?? process.env;
    const subscription = billingIsSubscription(this.options.billing, turn.subscription, () =>
      this.dialect.subscriptionFromEnvironment(env),
    );
    const usage = turn.usage ?? ZERO_USAGE;
    const cost: CliCost = subscription
      ? { kind: "notBilled" }
      : usage.reportedCost === undefined
        ? { kind: "unknown" }
        : { kind: "reported", dollars: usage.reportedCost };
    const reportedUsage = subscription ? withoutCost(usage) : usage;

    if (run.outcome === "cancelled") {
      this.lastFailure = undefined;
      for (const event of parser.unfinishedTools("cancelled")) turn.take(event);
      return {
        history: turn.history(input.userMessage),
        usage: reportedUsage,
        cost,
        cancelled: true,
      };
    }
    const failure = this.failureOf(run, parser, turn, command);
    this.lastFailure = failure;
    if (failure !== undefined) {
      for (const event of parser.unfinishedTools("failed")) turn.take(event);
      return {
        history: turn.history(input.userMessage),
        usage: reportedUsage,
        cost,
        failure: failure.message,
      };
    }
    return { history: turn.history(input.userMessage), usage: reportedUsage, cost };
  }

  /**
   * Why the turn failed, with the CLI's standard error; undefined when it did not. The code is
   * the first reason's (a missing binary, a start failure, malformed output, a non-zero exit,
   * a turn the CLI reported as failed), the message lists every reason, then the stderr tail.
   */
  private failureOf(
    run: CliProcessResult,
    parser: AgentStreamParser,
    turn: TurnCollector,
    command: string,
  ): VerbatimError | undefined {
    const name = this.dialect.name;
    const reasons: [ErrorCode, string][] = turn.failures.map((text) => [
      "cli_agent_turn_failed",
      text,
    ]);
    if (run.outcome === "notFound") {
      reasons.push([
        "cli_agent_not_found",
        `${name} is not installed: \`${command}\` was not found on PATH. ${this.dialect.installHint}, or pass the path of the executable as \`command\``,
      ]);
    } else if (run.outcome === "spawnFailed") {
      reasons.push([
        "cli_agent_start_failed",
        `${name} (\`${command}\`) could not be started: ${run.startError ?? "unknown error"}`,
      ]);
    } else {
      if (parser.malformedLine !== undefined) {
        reasons.push([
          "cli_agent_malformed_output",
          `${name} wrote a line that is not a JSON event: ${parser.malformedLine}`,
        ]);
      }
      if (run.exitCode !== 0) {
        const how =
          run.signal === null ? `exit code ${run.exitCode ?? "?"}` : `signal ${run.signal}`;
        reasons.push(["cli_agent_exit", `${name} exited with ${how}`]);
      } else if (!parser.sawTurnEnd && reasons.length === 0) {
        reasons.push(["cli_agent_turn_failed", `${name} ended without finishing the turn`]);
      }
    }
    const first = reasons[0];
    if (first === undefined) return undefined;
    const stderr = run.stderr.trim();
    const tail = stderr.length > 4000 ? `…${stderr.slice(-4000)}` : stderr;
    const text = reasons.map(([, reason]) => reason).join("\n");
    return new VerbatimError(first[0], tail === "" ? text : `${text}\nstderr:\n${tail}`, {
      where: `${command} ${this.dialect.args(this.options, undefined).join(" ")}`,
      details: { codes: reasons.map(([code]) => code), exitCode: run.exitCode },
    });
  }
}

/** Collects what the stream reports during one turn. */
class TurnCollector {
  linesRead = 0;
  session: string | undefined;
  subscription: boolean | undefined;
  usage: Usage | undefined;
  readonly failures: string[] = [];
  private finalText: string | undefined;

  constructor(private readonly onItem: (item: Item) => void) {}

  take(event: AgentStreamEvent): void {
    switch (event.type) {
      case "session":
        this.session = event.id;
        return;
      case "item":
        // The conversation adds the one failure item of a turn from the result's `failure`.
        if (event.item.type === "failure") this.failures.push(event.item.message);
        else this.onItem(event.item);
        return;
      case "assistantText":
        this.finalText = event.text;
        return;
      case "usage":
        this.usage = this.usage === undefined ? event.usage : addUsage(this.usage, event.usage);
        return;
      case "billing":
        this.subscription = event.subscription;
        return;
      case "turnEnd":
        return;
      default: {
        const unreachable: never = event;
        throw new Error(`unknown stream event ${String(unreachable)}`);
      }
    }
  }

  /** The user message and the final assistant text; nothing when the CLI never answered. */
  history(userMessage: Message): Message[] {
    if (this.linesRead === 0) return [];
    const messages: Message[] = [userMessage];
    if (this.finalText !== undefined) {
      messages.push({ role: "assistant", content: [{ type: "text", text: this.finalText }] });
    }
    return messages;
  }
}

function billingIsSubscription(
  option: CliBilling | undefined,
  reported: boolean | undefined,
  fromEnvironment: () => boolean,
): boolean {
  if (option === "subscription") return true;
  if (option === "apiKey") return false;
  return reported ?? fromEnvironment();
}

function withoutCost(usage: Usage): Usage {
  if (usage.reportedCost === undefined) return usage;
  const { reportedCost: _ignored, ...rest } = usage;
  return rest;
}
