/**
 * The README's example, kept as a type-checked file: readme-example.test.ts compares it with the
 * README text (imports aside) and readme-example.e2e.test.ts runs it against the real Codex. It
 * lives under tests/, so it is not part of the published package.
 */
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { connectStdio, discoverCodexBinary, nodeBinaryHost } from "@baton/ipc-codex"
import * as wake from "@baton/wake"
import { Effect, Layer } from "effect"

// README-EXAMPLE-START
/** Creates a job, writes its checkpoint, arms it, then runs one watcher pass. */
export const createArmAndWatchOnce = (options: {
  readonly wakeDir: string // wake.wakeDirectory(process.env): $BATON_WAKE_DIR or $CODEX_HOME/baton/wake
  readonly codexHome: string
  readonly cwd: string // absolute: the continuation runs in it, later, from the watcher
  readonly env: Readonly<Record<string, string | undefined>> // CODEX_HOME, PATH, BATON_CODEX_BINARY
  readonly batonCommand: string // `${process.execPath} <path of @baton/cli>/dist/bin.js`
}) =>
  Effect.gen(function* () {
    const fs = wake.nodeWakeFileSystem
    const holderProbe = wake.nodeContinuationProcesses.isAlive
    const store = wake.makeJobStore(options.wakeDir, fs, process.pid, { holderProbe })

    // 1. Create a draft job (settings are checked before anything is stored: InvalidJobSetting).
    const { stored } = yield* wake.createJob(store, fs, {
      objective: "Port the parser to the new AST",
      threadId: null, // or the owning conversation's $CODEX_THREAD_ID
      cwd: options.cwd,
      model: null,
      reasoningEffort: null,
      delivery: "new_thread",
      bounds: { maxGenerations: 3 }, // the others keep their defaults
      idSuffix: randomBytes(4).toString("hex"),
    })
    const jobId = stored.job.jobId

    // 2. Checkpoint: Objective and Next actions filled makes it ready to arm.
    const checkpoint = [
      "## Objective",
      "Port the parser to the new AST.",
      "",
      "## Next actions",
      "1. Port src/parse-expr.ts and run its tests.",
      "",
    ].join("\n")
    const written = yield* wake.writeJobCheckpoint(store, jobId, checkpoint)
    if (written.problems.length > 0) return yield* Effect.fail(written.problems)
    yield* wake.armJob(store, jobId) // draft → monitoring

    // 3. One watcher pass: read the quota (no model turn), launch a continuation if allowed.
    const binary = yield* discoverCodexBinary({ ...nodeBinaryHost(), env: options.env })
    const services = Layer.mergeAll(
      Layer.succeed(wake.JobStore, store),
      Layer.succeed(wake.WakeFileSystem, fs),
      wake.codexQuotaReaderLayer(
        connectStdio({ binary, env: options.env, cwd: options.codexHome }),
      ),
      wake.rolloutThreadSignalsLayer(options.codexHome),
      wake.nodeContinuationProcessesLayer,
      wake.statusOnlyCheckpointChannelLayer, // no daemon: checkpoint requests show in status
      wake.unavailableSameThreadTurnsLayer, // no daemon: continuations start new threads
    )
    yield* wake
      .runWatcher({
        identity: { pid: process.pid, startTicks: null, host: hostname() },
        codexBinary: binary.path,
        batonCommand: options.batonCommand,
        baseEnv: options.env,
        once: true, // without it the watcher runs until interrupted
        onEvent: (event) => console.log(event.kind, event.jobId ?? ""),
      })
      .pipe(Effect.scoped, Effect.provide(services))

    return yield* wake.jobStatus(store, fs, jobId)
  })
// README-EXAMPLE-END
