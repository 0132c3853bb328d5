import { expect, test } from "vitest"
import { execPlan } from "./continuation-plan.js"
import { defaultJobBounds, newJobRecord } from "./job-record.js"

const job = {
  ...newJobRecord({
    jobId: "wake-20250131-120000-0123abcd",
    originalThreadId: "019a0000-0000-7000-8000-000000000001",
    cwd: "/work/project",
    model: "gpt-5.6-luna",
    reasoningEffort: "low",
    limitId: null,
    bounds: defaultJobBounds,
    createdAt: 0,
  }),
}
const input = {
  codexBinary: "/usr/bin/codex",
  job,
  generation: 2,
  jobDir: "/home/u/.codex/baton/wake/jobs/wake-20250131-120000-0123abcd",
  prompt: "Continue Baton wake job …",
  lastMessageFile: "/runs/run-0002.last-message.txt",
  resumeThreadId: null,
  baseEnv: { PATH: "/bin", CODEX_THREAD_ID: "parent", UNSET: undefined },
}

test("a new thread: exec --json in the job's cwd, workspace-write, the job dir writable, model and effort", () => {
  const plan = execPlan(input)
  if (plan._tag !== "ExecPlan") throw new Error(plan.message)
  expect(plan.mode).toBe("new_thread")
  expect(plan.command).toBe("/usr/bin/codex")
  expect(plan.cwd).toBe("/work/project")
  expect(plan.args).toEqual([
    "exec",
    "--json",
    "--color",
    "never",
    "--sandbox",
    "workspace-write",
    "--skip-git-repo-check",
    "-C",
    "/work/project",
    "--add-dir",
    input.jobDir,
    "-o",
    input.lastMessageFile,
    "-m",
    "gpt-5.6-luna",
    "-c",
    'model_reasoning_effort="low"',
    "--",
    input.prompt,
  ])
  expect(plan.env).toEqual({
    PATH: "/bin",
    BATON_WAKE_JOB_ID: job.jobId,
    BATON_WAKE_GENERATION: "2",
  })
})

test("the job's own thread: exec resume <id> with the sandbox as config overrides; never --last", () => {
  const plan = execPlan({ ...input, resumeThreadId: "019a0000-0000-7000-8000-0000000000c1" })
  if (plan._tag !== "ExecPlan") throw new Error(plan.message)
  expect(plan.mode).toBe("job_thread")
  expect(plan.args.slice(0, 3)).toEqual(["exec", "resume", "--json"])
  expect(plan.args).toContain('sandbox_mode="workspace-write"')
  expect(plan.args).toContain(`sandbox_workspace_write.writable_roots=["${input.jobDir}"]`)
  expect(plan.args.slice(-3)).toEqual(["--", "019a0000-0000-7000-8000-0000000000c1", input.prompt])
  expect(plan.args).not.toContain("--last")
})

test("settings that could inject into argv or TOML are refused", () => {
  expect(execPlan({ ...input, job: { ...job, model: "x --dangerously-bypass" } })).toMatchObject({
    _tag: "InvalidJobSetting",
    field: "model",
  })
  expect(execPlan({ ...input, job: { ...job, reasoningEffort: 'low" ; x="' } })).toMatchObject({
    _tag: "InvalidJobSetting",
    field: "reasoning effort",
  })
  expect(execPlan({ ...input, resumeThreadId: "--last" })).toMatchObject({
    _tag: "InvalidJobSetting",
  })
})
