/**
 * Waits until `check` holds, asking every `pollMs`; throws "timed out waiting" (and what for,
 * when `what` says it) after `timeoutMs`. For tests that wait on another process or a server's
 * background work.
 */
export async function until(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 5000,
  pollMs = 10,
  what?: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting${what === undefined ? "" : ` for ${what}`} (${timeoutMs} ms)`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
