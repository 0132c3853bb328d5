// Real `codex app-server daemon` in an isolated CODEX_HOME, driven over its unix socket.
import { existsSync } from "node:fs"
import { readFile, readlink } from "node:fs/promises"
import { afterEach, describe, expect, it } from "vitest"
import {
  createCodexHome,
  findProcessesByEnv,
  startCodexDaemon,
  startMockResponses,
  textReply,
} from "@baton/testkit"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe("codex app-server daemon against the mock", () => {
  it("starts, serves two clients on one thread, stops, and leaves nothing behind", async () => {
    const mock = await startMockResponses({
      replies: [textReply("daemon answer"), textReply("DAEMON-SUMMARY")],
    })
    cleanups.push(() => mock.close())
    const home = await createCodexHome({ mock })
    cleanups.push(() => home.dispose())
    const daemon = await startCodexDaemon(home)
    cleanups.push(() => daemon.dispose())

    expect(daemon.startOutput).toMatchObject({
      status: "started",
      backend: "pid",
      cliVersion: "0.169.0",
      appServerVersion: "0.169.0",
      managedCodexVersion: "0.169.0",
    })
    expect(daemon.socketPath).toBe(`${home.codexHome}/app-server-control/app-server-control.sock`)
    const uid = process.getuid?.() ?? 0
    expect(await readlink(daemon.socketPath)).toMatch(
      new RegExp(`^/tmp/codex-daemon-${uid}/[0-9a-f]{64}$`),
    )
    expect(await daemon.command("version")).toMatchObject({ status: "running" })

    const first = await daemon.connect()
    const { threadId } = await first.startThread({ cwd: home.workdir })
    const turn = await first.runTurn(threadId, "hello daemon")
    expect(turn.status).toBe("completed")
    expect(mock.requests()).toHaveLength(1)
    expect(mock.lastRequest().headers["originator"]).toBe("baton-testkit")

    // A second client on the same daemon can resume the thread and compact it; both see it.
    const second = await daemon.connect()
    await second.request("thread/resume", { threadId })
    const since = first.notifications().length
    const compaction = await second.compact(threadId)
    expect(compaction.status).toBe("completed")
    await first.waitForTurnCompleted(compaction.turnId, { since, timeoutMs: 10_000 })
    expect(
      first
        .notifications()
        .slice(since)
        .some(
          (n) =>
            n.method === "item/completed" &&
            (n.params as { item: { type: string } }).item.type === "contextCompaction",
        ),
    ).toBe(true)
    expect(mock.requests()).toHaveLength(2)

    const commandLine = async (pid: number) =>
      (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0").join(" ").trim()
    const daemonPids = await findProcessesByEnv(`CODEX_HOME=${home.codexHome}`)
    const serverPid = daemon.startOutput["pid"] as number
    expect(daemonPids).toContain(serverPid)
    expect(await commandLine(serverPid)).toMatch(
      /app-server --listen unix:\/\/ --analytics-default-enabled --managed-daemon$/,
    )
    const updaterPids: Array<number> = []
    for (const pid of daemonPids)
      if ((await commandLine(pid)).endsWith("app-server daemon pid-update-loop"))
        updaterPids.push(pid)
    expect(updaterPids).toHaveLength(1)

    const report = await daemon.stop()
    expect(report.output).toMatchObject({ status: "stopped" })
    // `daemon stop` ends the server but leaves the pid-update-loop running (§10(g)); stop()
    // killed it by pid.
    expect(report.leftoverPids).toEqual(updaterPids)

    // The killed pid-update-loop had opened its own socket, also a symlink into /tmp.
    const updaterSocket = await readlink(`${home.codexHome}/app-server-daemon/daemon-updater.sock`)
    expect(updaterSocket).toMatch(new RegExp(`^/tmp/codex-daemon-${uid}/[0-9a-f]{64}$`))

    await daemon.dispose()
    expect(await findProcessesByEnv(`CODEX_HOME=${home.codexHome}`)).toEqual([])
    expect(existsSync(daemon.resolvedSocketPath)).toBe(false)
    expect(existsSync(updaterSocket)).toBe(false)
    expect(existsSync(`${updaterSocket}.lock`)).toBe(false)
    expect(mock.outboundAttempts()).toEqual([])
  })
})
