import { mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import { afterEach, beforeAll, describe, expect, test } from "vitest"
import type { ProtocolSurface } from "./compatibility.js"
import {
  checkCompatibility,
  diffProtocolSurface,
  extractProtocolSurface,
  formatCompatibilityReport,
  loadSchemaBundle,
  probeCompatibility,
} from "./compatibility.js"
import { SchemaGenerationError } from "./errors.js"

const generatedDir = fileURLToPath(new URL("./generated/", import.meta.url))
let bundle: { definitions: Record<string, Record<string, unknown>> }
let baseline: ProtocolSurface

beforeAll(async () => {
  bundle = (await Effect.runPromise(
    loadSchemaBundle(join(generatedDir, "json-schema")),
  )) as typeof bundle
  baseline = JSON.parse(
    await readFile(join(generatedDir, "protocol-surface.json"), "utf8"),
  ) as ProtocolSurface
})

const clone = () => structuredClone(bundle)

describe("protocol surface of the committed 0.169.0 schema", () => {
  test("matches the committed baseline and passes every check", () => {
    const surface = extractProtocolSurface(bundle)
    expect(diffProtocolSurface(baseline, surface)).toEqual([])
    const report = checkCompatibility(surface)
    expect(formatCompatibilityReport(report)).not.toContain("FAIL")
    expect(report.ok).toBe(true)
  })
})

describe("drift is reported readably", () => {
  test("an extra required compaction parameter", () => {
    const drifted = clone()
    drifted.definitions["ThreadCompactStartParams"]!["required"] = ["threadId", "instructions"]
    const report = checkCompatibility(extractProtocolSurface(drifted))
    expect(report.ok).toBe(false)
    const text = formatCompatibilityReport(report)
    expect(text).toContain("FAIL thread/compact/start requires only threadId (string)")
    expect(text).toContain(
      "request thread/compact/start params: expected an object requiring exactly [threadId]; saw object{required: instructions,threadId}",
    )
    expect(diffProtocolSurface(baseline, report.surface)).toEqual([
      "~ request thread/compact/start params: object{required: threadId}  →  object{required: instructions,threadId}",
    ])
  })

  test("the contextCompaction item variant disappears", () => {
    const drifted = clone()
    const item = drifted.definitions["ThreadItem"]!
    item["oneOf"] = (
      item["oneOf"] as Array<{ properties?: { type?: { enum?: Array<string> } } }>
    ).filter((v) => v.properties?.type?.enum?.[0] !== "contextCompaction")
    const report = checkCompatibility(extractProtocolSurface(drifted))
    const check = report.checks.find((c) => c.id === "compaction-items")!
    expect(check.ok).toBe(false)
    expect(check.problems[0]).toContain(
      "item[type=contextCompaction].id: expected string (required); saw missing",
    )
  })

  test("ordinaryUsageAllowed removed, activeFlags renamed, a method removed", () => {
    const drifted = clone()
    delete (
      drifted.definitions["GetAccountRateLimitsResponse"]!["properties"] as Record<string, unknown>
    )["ordinaryUsageAllowed"]
    const status = drifted.definitions["ThreadStatus"]!["oneOf"] as Array<{
      properties: Record<string, unknown>
      required: Array<string>
    }>
    const active = status.find((v) => JSON.stringify(v).includes('"active"'))!
    active.properties["flags"] = active.properties["activeFlags"]
    delete active.properties["activeFlags"]
    active.required = ["flags", "type"]
    const requests = drifted.definitions["ClientRequest"]!
    requests["oneOf"] = (
      requests["oneOf"] as Array<{ properties: { method: { enum: Array<string> } } }>
    ).filter((v) => v.properties.method.enum[0] !== "thread/loaded/list")
    const report = checkCompatibility(extractProtocolSurface(drifted))
    expect(report.checks.filter((c) => !c.ok).map((c) => c.id)).toEqual([
      "thread-status",
      "rate-limit-read",
      "thread-methods",
    ])
    expect(formatCompatibilityReport(report)).toContain(
      "request thread/loaded/list params: expected it to exist; saw missing",
    )
  })
})

describe("probeCompatibility cache", () => {
  let dir = ""
  afterEach(async () => {
    if (dir !== "") await rm(dir, { recursive: true, force: true })
  })

  test("generates once per binary identity; a changed binary or a corrupt cache regenerates", async () => {
    dir = await mkdtemp(join(tmpdir(), "baton-compat-"))
    const binary = join(dir, "codex")
    await writeFile(binary, "#!/bin/sh\n", { mode: 0o755 })
    let generated = 0
    const generate = () => Effect.sync(() => (generated++, bundle))
    const probe = () =>
      Effect.runPromise(probeCompatibility({ binary, cacheDir: join(dir, "cache"), generate }))

    const first = await probe()
    const second = await probe()
    expect([first.fromCache, second.fromCache, generated]).toEqual([false, true, 1])
    expect(second.report.ok).toBe(true)

    await utimes(binary, new Date(), new Date(Date.now() + 5_000))
    expect((await probe()).fromCache).toBe(false)
    expect(generated).toBe(2)

    await writeFile(join(dir, "cache", "codex-compatibility.json"), "{not json")
    expect((await probe()).fromCache).toBe(false)
    expect(generated).toBe(3)
  })

  test("a generator failure is a SchemaGenerationError; a missing binary too", async () => {
    dir = await mkdtemp(join(tmpdir(), "baton-compat-"))
    const binary = join(dir, "codex")
    await writeFile(binary, "", { mode: 0o755 })
    const failing = () => Effect.fail(new SchemaGenerationError({ binary, reason: "exit 2" }))
    const a = await Effect.runPromise(
      Effect.flip(probeCompatibility({ binary, cacheDir: dir, generate: failing })),
    )
    const b = await Effect.runPromise(
      Effect.flip(probeCompatibility({ binary: join(dir, "absent"), cacheDir: dir })),
    )
    expect(a.reason).toBe("exit 2")
    expect(b.reason).toContain("cannot stat the binary")
  })
})
