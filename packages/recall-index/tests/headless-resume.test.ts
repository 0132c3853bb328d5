// A Claude Code session is headless (`claude -p`) only while every record that says where it came
// from says so. A `claude --resume` of a `-p` session, or a `claude -p --resume` of an interactive
// one, holds someone's typed work, and `--no-headless` must keep showing it — whether the other
// kind of record is in the first index run or in an append to it (the session's state is carried
// in the stored parse state between runs).
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { recentSessions } from "@baton/recall-index"
import { runIndex, tempDir, withIndex } from "./index-harness.js"

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

const SID = "d1d1d1d1-0000-4000-8000-000000000001"

const setup = () => {
  const home = tempDir("home")
  const data = tempDir("data")
  cleanups.push(home.dispose, data.dispose)
  const claude = join(home.path, ".claude")
  const project = join(claude, "projects", "-work-app")
  mkdirSync(project, { recursive: true })
  return {
    environment: {
      env: { CLAUDE_CONFIG_DIR: claude, CODEX_HOME: join(home.path, ".codex") },
      homeDir: home.path,
    },
    dataDir: join(data.path, "baton"),
    file: join(project, `${SID}.jsonl`),
  }
}

let n = 0
/** A user prompt as `claude -p` (`sdk`) or the interactive CLI (`cli`) writes it. */
const prompt = (how: "sdk" | "cli", text: string): string => {
  n += 1
  return `${JSON.stringify({
    parentUuid: null,
    isSidechain: false,
    type: "user",
    uuid: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
    timestamp: new Date(Date.UTC(2026, 10, 20, 9, n)).toISOString(),
    ...(how === "sdk" ? { promptSource: "sdk", entrypoint: "sdk-cli" } : { entrypoint: "cli" }),
    userType: "external",
    cwd: "/work/app",
    sessionId: SID,
    version: "2.1.328",
    message: { role: "user", content: text },
  })}\n`
}

const headless = async (dataDir: string): Promise<boolean | undefined> => {
  const all = await withIndex(dataDir, recentSessions({ limit: 10 }))
  const visible = await withIndex(dataDir, recentSessions({ limit: 10, excludeHeadless: true }))
  const flag = all.find((s) => s.sessionId === SID)?.headless
  // `excludeHeadless` agrees with the flag.
  expect(visible.some((s) => s.sessionId === SID)).toBe(flag === false)
  return flag
}

describe("headless Claude Code sessions and resumes", () => {
  it("marks a session every record of which is `claude -p` headless, across appends", async () => {
    const { environment, dataDir, file } = setup()
    writeFileSync(file, prompt("sdk", "run the nightly report"))
    await runIndex(dataDir, { environment })
    expect(await headless(dataDir)).toBe(true)
    appendFileSync(file, prompt("sdk", "and the weekly one"))
    const run = await runIndex(dataDir, { environment })
    expect(run.appended).toBe(1)
    expect(await headless(dataDir)).toBe(true)
  })

  it("keeps a `claude -p` session resumed interactively visible, from the append on", async () => {
    const { environment, dataDir, file } = setup()
    writeFileSync(file, prompt("sdk", "run the nightly report"))
    await runIndex(dataDir, { environment })
    expect(await headless(dataDir)).toBe(true)
    appendFileSync(file, prompt("cli", "typed by hand: why did it fail?"))
    const run = await runIndex(dataDir, { environment })
    expect(run.appended).toBe(1)
    expect(await headless(dataDir)).toBe(false)
    // A later `-p` turn does not hide it again.
    appendFileSync(file, prompt("sdk", "rerun it"))
    await runIndex(dataDir, { environment })
    expect(await headless(dataDir)).toBe(false)
  })

  it("keeps an interactive session resumed with `claude -p` visible, in one run or across two", async () => {
    const split = setup()
    writeFileSync(split.file, prompt("cli", "let us plan the migration"))
    await runIndex(split.dataDir, { environment: split.environment })
    expect(await headless(split.dataDir)).toBe(false)
    appendFileSync(split.file, prompt("sdk", "summarise the plan"))
    const run = await runIndex(split.dataDir, { environment: split.environment })
    expect(run.appended).toBe(1)
    expect(await headless(split.dataDir)).toBe(false)

    const whole = setup()
    writeFileSync(
      whole.file,
      prompt("cli", "let us plan the migration") + prompt("sdk", "summarise the plan"),
    )
    await runIndex(whole.dataDir, { environment: whole.environment })
    expect(await headless(whole.dataDir)).toBe(false)
  })
})
