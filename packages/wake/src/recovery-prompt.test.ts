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
