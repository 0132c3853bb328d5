/**
 * `probe_compaction`: the read-only probe of one Codex thread — which transports can reach it
 * and why not, its owner, status, context tokens and window, rate limits and the codex binary's
 * protocol compatibility — as `probeThread` in @baton/ipc-codex reports it (the same structure
 * `baton codex probe --json` prints). Guarantees: never resumes, compacts or starts a turn;
 * an id that is not a Codex thread id is an `InvalidThreadIdError`, never guessed; effect and
 * @baton/ipc-codex load on the first call.
 */
import { homedir } from "node:os"
import { isAbsolute, join } from "node:path"
import { z } from "zod"
import { defineBatonTool, toolFailure, toolSuccess } from "./baton-tool.js"

/** Input of `probe_compaction`. */
export const probeCompactionInput = {
  threadId: z
    .string()
    .describe("The Codex thread id (a UUID; inside Codex it is $CODEX_THREAD_ID). Never guessed."),
}

const verdict = z.enum(["chosen", "unavailable", "not-holding-thread", "skipped"])
const transportKind = z.enum(["extension", "daemon", "stdio"])

/** Output of `probe_compaction`: the `ThreadProbeReport` structure. */
export const probeCompactionOutput = {
  threadId: z.string(),
  selected: transportKind.nullable().describe("the transport Baton would use; null: none"),
  transports: z
    .array(
      z.object({
        transport: transportKind,
        verdict,
        available: z.boolean(),
        detail: z.string(),
      }),
    )
    .describe("every option in order extension → daemon → stdio, with the reason"),
  owner: z.object({
    kind: z.enum(["extension", "daemon", "none"]),
    clientId: z.string().nullable().describe("the VS Code client id when the extension owns it"),
    detail: z.string(),
  }),
  thread: z.object({
    status: z.string().nullable().describe("idle, active, notLoaded, systemError, … or null"),
    activeFlags: z.array(z.string()),
    pendingRequests: z.number().int().nullable(),
    source: z.enum(["extension", "daemon", "stdio"]).nullable(),
    detail: z.string(),
  }),
  context: z.object({
    tokens: z.number().nullable().describe("current context occupancy in tokens"),
    window: z.number().nullable().describe("the model's context window in tokens"),
    source: z.enum(["extension", "rollout"]).nullable(),
    detail: z.string(),
  }),
  rateLimits: z.object({
    status: z.enum(["read", "not-signed-in", "unavailable"]),
    via: z.enum(["daemon", "stdio"]).nullable(),
    ordinaryUsageAllowed: z.boolean().nullable(),
    primaryUsedPercent: z.number().nullable(),
    secondaryUsedPercent: z.number().nullable(),
    detail: z.string(),
  }),
  compatibility: z.object({
    status: z.enum(["ok", "incompatible", "unknown"]),
    binary: z
      .object({ path: z.string(), source: z.string(), version: z.string().nullable() })
      .nullable(),
    fromCache: z.boolean().nullable(),
    failedChecks: z.array(z.string()),
    detail: z.string(),
  }),
}

/** The compatibility cache; none when `BATON_DATA_DIR` is relative (refused, as recall does). */
const cacheDir = (env: NodeJS.ProcessEnv): string | null => {
  const data = env["BATON_DATA_DIR"]
  const xdg = env["XDG_DATA_HOME"]
  if (data !== undefined && data !== "" && !isAbsolute(data)) return null
  const base =
    data !== undefined && data !== ""
      ? data
      : xdg !== undefined && isAbsolute(xdg)
        ? join(xdg, "baton")
        : join(homedir(), ".local", "share", "baton")
  return join(base, "cache")
}

/** The `probe_compaction` tool. */
export const probeCompactionTool = defineBatonTool({
  name: "probe_compaction",
  title: "Probe a Codex thread for compaction",
  description:
    "Read-only check before compacting a Codex thread: which transport can reach it (the VS Code window that owns it, the app-server daemon, or a private app-server) and why the others cannot, the thread's status, its context tokens and window, rate limits when signed in, and whether the codex binary speaks the protocol Baton needs. Nothing is resumed, compacted or started.",
  inputSchema: probeCompactionInput,
  outputSchema: probeCompactionOutput,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: async ({ threadId }) => {
    const [Effect, ipc] = await Promise.all([import("effect/Effect"), import("@baton/ipc-codex")])
    if (!ipc.isCodexThreadId(threadId))
      return toolFailure(new ipc.InvalidThreadIdError({ value: threadId }))
    const report = await Effect.runPromise(
      ipc.probeThread({ threadId, compatibilityCacheDir: cacheDir(process.env) }),
    )
    return toolSuccess({
      ...report,
      transports: [...report.transports],
      thread: { ...report.thread, activeFlags: [...report.thread.activeFlags] },
      compatibility: {
        ...report.compatibility,
        failedChecks: [...report.compatibility.failedChecks],
      },
    })
  },
})
