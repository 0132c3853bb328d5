/**
 * `baton codex probe [threadId] [--json]`: a read-only report on how Baton can reach a Codex
 * thread (see `probeThread` in @baton/ipc-codex). The thread id comes from the argument or
 * `$CODEX_THREAD_ID` — never guessed — and must look like a Codex thread id (a UUID); otherwise
 * it is bad usage (exit 2). Exit 0 whenever the probe ran, even if nothing can reach the
 * thread: that is a finding. @baton/ipc-codex and effect load only when this command runs.
 */
import { homedir } from "node:os"
import { join } from "node:path"
import { resolveCodexHome, resolveDataDir } from "./baton-paths.js"
import type { CommandRunner } from "./command-spec.js"
import { renderProbeJson, renderProbeText } from "./codex-probe-report.js"
import { resolveThreadId } from "./thread-id-argument.js"

/** Runs `baton codex probe`. */
export const runCodexProbe: CommandRunner = async (invocation, io) => {
  const json = invocation.flags["json"] === true
  const resolved = resolveThreadId(invocation.positionals[0], io, "baton codex probe")
  if (resolved._tag === "Invalid") return { _tag: "Failed", json, error: resolved.error }
  const { threadId } = resolved
  const [Effect, ipc] = await Promise.all([import("effect/Effect"), import("@baton/ipc-codex")])
  const home = homedir()
  const codexHome = resolveCodexHome(io.env, home, io.cwd).path
  // A relative BATON_DATA_DIR is refused: the probe runs without its cache then.
  const dataDir = resolveDataDir(io.env, home)
  const report = await Effect.runPromise(
    ipc.probeThread({
      threadId,
      daemon: { codexHome },
      extension: {
        environment: { ...ipc.nodeEndpointEnvironment(), env: io.env, homeDir: home },
      },
      stdio: { env: io.env, cwd: io.cwd },
      discoverBinary: ipc.discoverCodexBinary({ ...ipc.nodeBinaryHost(), env: io.env }),
      compatibilityCacheDir: dataDir.relative === true ? null : join(dataDir.path, "cache"),
    }),
  )
  io.stdout(json ? renderProbeJson(report) : renderProbeText(report))
  return { _tag: "Completed", exitCode: 0 }
}
