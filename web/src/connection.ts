import { RequestError } from "./api.js";

/**
 * The real connection state: "connected" only after the server answered, "offline" when it
 * does not (with the next retry counted down and a "retry now" button), "unauthorized" when
 * the token is refused. While offline it retries with growing delays; while connected it asks
 * /healthz now and then so that a server that went away shows as offline without a click.
 */
export type ConnectionState =
  "idle" | "connecting" | "connected" | "offline" | "unauthorized" | "error";

const DELAYS_MS = [1000, 2000, 4000, 8000, 15000];
const HEARTBEAT_MS = 10_000;

export class Connection {
  state: ConnectionState = "idle";
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private countdown: ReturnType<typeof setInterval> | undefined;
  private heartbeat: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly node: HTMLElement,
    private readonly retryButton: HTMLButtonElement,
    private readonly reload: () => void,
  ) {
    retryButton.addEventListener("click", () => this.retryNow());
  }

  private show(state: ConnectionState, text: string): void {
    this.state = state;
    this.node.textContent = text;
    this.node.className = `state-${state}`;
    this.retryButton.hidden = state !== "offline" && state !== "error";
  }

  connecting(): void {
    if (this.state !== "connected") this.show("connecting", "connecting…");
  }

  succeeded(): void {
    this.attempt = 0;
    this.clearTimers();
    this.show("connected", "connected");
    this.heartbeat ??= setInterval(() => void this.check(), HEARTBEAT_MS);
  }

  /** A request failed: say why; when the server is unreachable, retry with growing delays. */
  failed(error: unknown): void {
    if (error instanceof RequestError && error.kind === "unauthorized") {
      this.clearTimers();
      this.show("unauthorized", `${error.message} (check the operator token)`);
      return;
    }
    if (!(error instanceof RequestError) || error.kind !== "network") {
      this.show("error", error instanceof Error ? error.message : String(error));
      return;
    }
    this.clearTimers();
    const delay = DELAYS_MS[Math.min(this.attempt, DELAYS_MS.length - 1)] ?? 15000;
    this.attempt += 1;
    const until = Date.now() + delay;
    const tick = () =>
      this.show(
        "offline",
        `offline: the server does not answer; retrying in ${Math.max(0, Math.ceil((until - Date.now()) / 1000))} s`,
      );
    tick();
    this.countdown = setInterval(tick, 1000);
    this.retryTimer = setTimeout(() => this.retryNow(), delay);
  }

  retryNow(): void {
    this.clearTimers();
    this.show("connecting", "connecting…");
    this.reload();
  }

  private async check(): Promise<void> {
    if (this.state !== "connected") return;
    try {
      const response = await fetch("/healthz", { cache: "no-store" });
      if (!response.ok)
        throw new RequestError(`/healthz answered ${response.status}`, "network", response.status);
    } catch (error) {
      if (this.state === "connected")
        this.failed(
          error instanceof RequestError ? error : new RequestError(String(error), "network", 0),
        );
    }
  }

  private clearTimers(): void {
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    if (this.countdown !== undefined) clearInterval(this.countdown);
    this.retryTimer = undefined;
    this.countdown = undefined;
    if (this.state !== "connected" && this.heartbeat !== undefined) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
  }
}
