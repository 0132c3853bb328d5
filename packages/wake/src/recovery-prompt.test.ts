import { expect, test } from "vitest"
import { recoveryPrompt } from "./recovery-prompt.js"

test("recovery prompt (golden)", () => {
  const dir = "/home/u/.codex/baton/wake/jobs/wake-20250131-120000-0123abcd"
  const text = recoveryPrompt({
    jobId: "wake-20250131-120000-0123abcd",
    generation: 3,
    cwd: "/home/u/project",
    statePath: `${dir}/state.json`,
    capsulePath: `${dir}/memory-capsule.md`,
    checkpointPath: `${dir}/checkpoint.md`,
    batonCommand: '"/usr/bin/node" "/opt/baton/bin.js"',
  })
  expect(text).toMatchSnapshot()
  expect(text.indexOf("memory-capsule.md")).toBeLessThan(text.indexOf("checkpoint.md"))
  expect(text).not.toMatch(/codex exec resume|--last/)
})

test("recovery prompt embeds the capsule between markers and adapts its opening to the delivery", async () => {
  const { CAPSULE_BEGIN, CAPSULE_END } = await import("./recovery-prompt.js")
  const base = {
    jobId: "wake-20250131-120000-0123abcd",
    generation: 1,
    cwd: "/w",
    statePath: "/j/state.json",
    capsulePath: "/j/memory-capsule.md",
    checkpointPath: "/j/checkpoint.md",
    batonCommand: "baton",
  }
  const text = recoveryPrompt({ ...base, capsuleText: "# WAKE_MEMORY_CAPSULE_V1\nbody\n" })
  expect(text).toContain(`${CAPSULE_BEGIN}\n# WAKE_MEMORY_CAPSULE_V1\nbody\n${CAPSULE_END}\n`)
  expect(text).toContain("2. The memory capsule is embedded below")
  expect(text.indexOf("memory-capsule.md")).toBeLessThan(text.indexOf("checkpoint.md"))
  expect(recoveryPrompt({ ...base, delivery: "job_thread" })).toContain(
    "resumes the job's own continuation thread",
  )
  expect(recoveryPrompt(base)).not.toContain(CAPSULE_BEGIN)
})
