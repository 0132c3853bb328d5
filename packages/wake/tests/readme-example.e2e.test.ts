// The README example (tests/readme-example.ts) run as written against the real Codex and the mock:
// usage is not allowed, so the one watcher pass reads the quota (no model turn) and parks the job.
import { createCodexHome, resolveCodexBinary, startMockResponses } from "@baton/testkit"
import { Effect } from "effect"
import { expect, test, vi } from "vitest"
import { createArmAndWatchOnce } from "./readme-example.js"
import { ACCOUNT_ID, USER_ID, cliBin, usageAnswer } from "./wake-rig.js"

test("README example: create, checkpoint, arm, one watcher pass", async () => {
  const mock = await startMockResponses({ whamUsage: usageAnswer(false) })
  const home = await createCodexHome({
    mock,
    chatgptAuth: { accountId: ACCOUNT_ID, userId: USER_ID },
  })
  const native = resolveCodexBinary().native
  if (native === undefined) throw new Error("no native codex binary")
  const logged = vi.spyOn(console, "log").mockImplementation(() => undefined)
  try {
    const status = await Effect.runPromise(
      createArmAndWatchOnce({
        wakeDir: `${home.codexHome}/baton/wake`,
        codexHome: home.codexHome,
        cwd: home.workdir,
        env: { ...home.env, BATON_CODEX_BINARY: native },
        batonCommand: `${process.execPath} ${cliBin}`,
      }),
    )
    expect(status.state).toBe("quota_waiting")
    expect(status.cwd).toBe(home.workdir)
    expect(status.generation).toBe(0)
    expect(mock.requests().length).toBe(0)
    expect(mock.backendRequests().length).toBeGreaterThan(0)
    const kinds = logged.mock.calls.map((call) => String(call[0]))
    expect(kinds[0]).toBe("started")
    expect(kinds.at(-1)).toBe("stopped")
  } finally {
    logged.mockRestore()
    await home.dispose()
    await mock.close()
  }
})
