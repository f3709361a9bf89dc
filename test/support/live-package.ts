/**
 * What tests of a live conversation on a loopback provider share: an empty package folder
 * (removed by the caller's cleanups) and a provider backend pointed at the local server.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { providerBackend } from "../../packages/library/src/conversation/provider-backend.js";
import type { ProviderId } from "../../packages/library/src/providers/index.js";

/** A new empty `Poster.pkg` folder in a temporary folder that `cleanups` removes. */
export async function emptyPackage(
  cleanups: (() => Promise<void>)[],
  prefix: string,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const pkg = join(dir, "Poster.pkg");
  await mkdir(pkg);
  return pkg;
}

/** The built-in provider backend on a loopback server (model `requested-model`, no retries). */
export function localBackend(provider: ProviderId, baseUrl: string) {
  return providerBackend({
    provider,
    model: "requested-model",
    transport: { baseUrl, apiKey: "local-key", maxRetries: 0 },
  });
}
