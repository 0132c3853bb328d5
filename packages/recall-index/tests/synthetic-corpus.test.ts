// Drives discovery and both readers over the seeded synthetic trees (transcripts.md §5) and the
// real file system (a `.jsonl.zst` produced by the Debian zstd tool when present, else a committed
// tiny fixture compressed with it).
import { Effect } from "effect"
import type { Layer } from "effect"
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import {
  discoverTranscripts,
  mergeParseResults,
  nodeTranscriptFileSystemLayer,
  parseTranscriptBytes,
  parseTranscriptFile,
} from "@baton/recall-index"
import type { ParseOptions, ParseResult, TranscriptFileSystem } from "@baton/recall-index"
import { generateFixtureCorpus, makeMemoryTranscriptFiles } from "@baton/recall-index/testing"
import type { FixtureExpectation } from "@baton/recall-index/testing"

const corpus = generateFixtureCorpus({ seed: 7 })
const memory = makeMemoryTranscriptFiles(corpus.files)
memory.symlink(corpus.brokenSymlink, "/nowhere/gone.jsonl")
memory.write(corpus.unreadable, "{}\n")
memory.makeUnreadable(corpus.unreadable)
const environment = {
  env: { CLAUDE_CONFIG_DIR: corpus.claudeConfigDir, CODEX_HOME: corpus.codexHome },
  homeDir: corpus.homeDir,
}

const run = <A, E>(
  effect: Effect.Effect<A, E, TranscriptFileSystem>,
  layer: Layer.Layer<TranscriptFileSystem> = memory.layer,
) => Effect.runPromise(effect.pipe(Effect.provide(layer)))

const parse = (e: FixtureExpectation, options: ParseOptions = {}): Promise<ParseResult> =>
  run(
    parseTranscriptFile(
      { source: e.source, path: e.path, compression: "none" },
      undefined,
      options,
    ),
  )

const surfaceOf = (r: ParseResult) =>
  r.turns.flatMap((t) => t.surface.map((s) => ({ role: s.role, text: s.text })))
const everything = (r: ParseResult): string => JSON.stringify([r.turns, r.preamble, r.sessions])

describe("discovery over the synthetic home", () => {
  it("lists exactly the expected transcript files, with roles, and reports the bad entries", async () => {
    const found = await run(discoverTranscripts(environment))
    const expected = corpus.expectations
      .filter((e) => e.discovered)
      .map((e) => e.path)
      .sort()
    expect(found.files.map((f) => f.path)).toEqual(expected)
    for (const f of found.files) {
      const e = corpus.expectations.find((x) => x.path === f.path)!
      expect(f.role).toBe(e.role)
      expect(f.source).toBe(e.source)
      expect(f.headHash).toMatch(/^[0-9a-f]{64}$/)
    }
    expect(found.problems).toEqual(
      expect.arrayContaining([
        { path: corpus.brokenSymlink, code: "ENOENT" },
        { path: corpus.unreadable, code: "EACCES" },
      ]),
    )
    expect(found.problems).toHaveLength(2)
    expect(found.missingRoots).toEqual([])
    const current = found.files.find(
      (f) => f.path.includes("/subagents/agent-") && f.metaPath !== undefined,
    )
    expect(current?.parentSessionId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("reports missing roots instead of failing, and follows CODEX_HOME / CLAUDE_CONFIG_DIR", async () => {
    const found = await run(discoverTranscripts({ env: {}, homeDir: "/home/nobody" }))
    expect(found.files).toEqual([])
    expect(found.missingRoots).toEqual([
      "/home/nobody/.claude/projects",
      "/home/nobody/.config/claude/projects",
      "/home/nobody/.codex/sessions",
      "/home/nobody/.codex/archived_sessions",
    ])
  })

  it("keeps the inode across an archive rename and changes the head hash when the head changes", async () => {
    const files = makeMemoryTranscriptFiles(corpus.files)
    const e = corpus.expectations.find((x) => x.scenario === "codex/era-wrapped")!
    const before = (await run(discoverTranscripts(environment), files.layer)).files.find(
      (f) => f.path === e.path,
    )!
    const archived = `${corpus.codexHome}/archived_sessions/${e.path.split("/").pop()!}`
    files.rename(e.path, archived)
    const after = (await run(discoverTranscripts(environment), files.layer)).files.find(
      (f) => f.path === archived,
    )!
    expect(after).toMatchObject({ ino: before.ino, headHash: before.headHash, archived: true })
  })
})

describe("readers over every synthetic scenario", () => {
  for (const e of corpus.expectations) {
    it(`${e.scenario}: exact surface, raw-only text, counters`, async () => {
      const r = await parse(e)
      if (e.surface !== undefined) expect(surfaceOf(r)).toEqual(e.surface)
      const surfaceText = JSON.stringify(surfaceOf(r))
      const rawText = JSON.stringify([r.turns.map((t) => t.records), r.preamble])
      for (const mark of e.rawOnly ?? []) {
        expect(rawText).toContain(JSON.stringify(mark).slice(1, -1))
        expect(surfaceText).not.toContain(mark)
      }
      for (const mark of e.absent ?? []) expect(everything(r)).not.toContain(mark)
      if (e.malformedLines !== undefined) expect(r.stats.malformedLines).toBe(e.malformedLines)
      if (e.invalidUtf8Lines !== undefined)
        expect(r.stats.invalidUtf8Lines).toBe(e.invalidUtf8Lines)
      if (e.truncatedTail !== undefined) expect(r.stats.truncatedTail).toBe(e.truncatedTail)
      if (e.unknownRecordTypes !== undefined) {
        expect(Object.keys(r.stats.unknownRecordTypes).sort()).toEqual(
          [...e.unknownRecordTypes].sort(),
        )
      }
      const primary = r.sessions.find((s) => s.sessionId === e.sessionId) ?? r.sessions[0]
      if (e.headless !== undefined) expect(primary?.headless).toBe(e.headless)
      if (e.subagent !== undefined) expect(primary?.subagent).toBe(e.subagent)
      if (e.cwd !== undefined) expect(primary?.cwd).toBe(e.cwd)
      if (e.surfaceWithSidechains !== undefined) {
        expect(surfaceOf(await parse(e, { includeSidechains: true }))).toEqual(
          e.surfaceWithSidechains,
        )
      }
    })
  }

  it("claude/typical: sessions, titles, ordinals, noise records and api-request-blob never in surface", async () => {
    const e = corpus.expectations.find((x) => x.scenario === "claude/typical")!
    const r = await parse(e)
    expect(r.turns.map((t) => t.ordinal)).toEqual(r.turns.map((_, i) => i))
    expect(r.turns.every((t) => t.endOffset > t.startOffset)).toBe(true)
    const main = r.sessions.find((s) => s.sessionId === e.sessionId)!
    expect(main).toMatchObject({
      title: "Custom title wins",
      gitBranch: "main",
      originator: "cli",
      cliVersion: "2.1.90",
    })
    expect(main.startedAt! <= main.endedAt!).toBe(true)
    const side = r.sessions.find((s) => s.subagent)!
    expect(side).toMatchObject({ parentSessionId: e.sessionId, agentId: "a1b2c3d4" })
    expect(r.stats.sidechainRecordsSkipped).toBe(2)
    expect(r.stats.unknownFieldLines).toBe(1)
    expect(r.stats.blankLines).toBe(2)
    const records = r.turns.flatMap((t) => t.records)
    const blob = records.filter((x) => x.recordType === "api-request-blob")
    expect(blob).toHaveLength(1)
    expect(blob[0]).toMatchObject({ kind: "noise", text: "", skipForGrep: true })
    expect(r.turns.find((t) => t.sidechain)).toBeUndefined()
    const withSide = await parse(e, { includeSidechains: true })
    expect(withSide.turns.filter((t) => t.sidechain).map((t) => t.role)).toEqual([
      "user",
      "assistant",
    ])
  })
})

describe("resuming an append-only file", () => {
  it("a truncated live line is re-read once complete; ordinals and the open turn continue", async () => {
    const files = makeMemoryTranscriptFiles(corpus.files)
    const e = corpus.expectations.find((x) => x.scenario === "claude/live-truncated")!
    const bytes = files.bytes(e.path)!
    const first = await run(
      parseTranscriptFile({ source: "claude", path: e.path, compression: "none" }),
      files.layer,
    )
    expect(first.stats.truncatedTail).toBe(true)
    expect(first.state.nextOffset).toBe(bytes.lastIndexOf(0x0a) + 1)
    const line = JSON.parse(
      JSON.stringify({
        type: "assistant",
        sessionId: e.sessionId,
        uuid: "u-live-2",
        message: {
          id: "m",
          role: "assistant",
          content: [{ type: "text", text: "LIVE-TAIL-MARK unfinished answer" }],
        },
      }),
    )
    // Rewrite the cut line in full (the agent finishes writing it), then append a new prompt.
    files.write(
      e.path,
      new Uint8Array([
        ...bytes.subarray(0, first.state.nextOffset),
        ...new TextEncoder().encode(`${JSON.stringify(line)}\n`),
      ]),
    )
    files.append(
      e.path,
      `${JSON.stringify({ type: "user", sessionId: e.sessionId, uuid: "u-live-3", message: { role: "user", content: "LIVE-NEXT-PROMPT" } })}\n`,
    )
    const next = await run(
      parseTranscriptFile({ source: "claude", path: e.path, compression: "none" }, first.state),
      files.layer,
    )
    expect(next.stats.firstOffset).toBe(first.state.nextOffset)
    expect(next.turns.map((t) => [t.role, t.ordinal, t.surface.map((s) => s.text)])).toEqual([
      ["assistant", 1, ["LIVE-TAIL-MARK unfinished answer"]],
      ["user", 2, ["LIVE-NEXT-PROMPT"]],
    ])
    const whole = await run(
      parseTranscriptFile({ source: "claude", path: e.path, compression: "none" }),
      files.layer,
    )
    const merged = mergeParseResults(first, next)
    expect(merged.turns).toEqual(whole.turns)
    expect(merged.state).toEqual(whole.state)
  })

  it("a resume offset past the end of a replaced file is a TranscriptResumeError", async () => {
    const e = corpus.expectations.find((x) => x.scenario === "codex/era-wrapped")!
    const first = await parse(e)
    const files = makeMemoryTranscriptFiles({ [e.path]: "{}\n" })
    const error = await Effect.runPromise(
      Effect.flip(
        parseTranscriptFile({ source: "codex", path: e.path, compression: "none" }, first.state),
      ).pipe(Effect.provide(files.layer)),
    )
    expect(error).toMatchObject({
      _tag: "TranscriptResumeError",
      path: e.path,
      offset: first.state.nextOffset,
      size: 3,
    })
  })
})

describe("compressed rollouts on the real file system", () => {
  const root = mkdtempSync(join(tmpdir(), "recall-zst-"))
  afterAll(() => rmSync(root, { recursive: true, force: true }))
  const here = dirname(fileURLToPath(import.meta.url))
  const hasZstd = (() => {
    try {
      execFileSync("zstd", ["--version"], { stdio: "ignore" })
      return true
    } catch {
      return false
    }
  })()

  it("discovers and parses a .jsonl.zst (zstd -3) exactly like its plain twin, and resumes inside it", async () => {
    const archived = join(root, "codex", "archived_sessions")
    mkdirSync(archived, { recursive: true })
    let plainText: string
    let zstPath: string
    let expectedSurface: ReadonlyArray<{ role: string; text: string }>
    if (hasZstd) {
      const e = corpus.expectations.find((x) => x.path === corpus.compressible)!
      const name = e.path.split("/").pop()!
      const plain = join(root, name)
      writeFileSync(plain, corpus.files[e.path]!)
      zstPath = join(archived, `${name}.zst`)
      execFileSync("zstd", ["-q", "-3", plain, "-o", zstPath])
      plainText = readFileSync(plain, "utf8")
      expectedSurface = e.surface!
    } else {
      const name = "rollout-2026-01-02T03-04-05-0b7c2a4e-1f3d-4e5a-9b6c-7d8e9f0a1b2c.jsonl.zst"
      zstPath = join(archived, name)
      copyFileSync(join(here, "fixtures", name), zstPath)
      plainText = ""
      expectedSurface = [
        { role: "user", text: "TINY-ZST-PROMPT" },
        { role: "assistant", text: "TINY-ZST-ANSWER" },
      ]
    }
    const found = await run(
      discoverTranscripts(
        { env: { CODEX_HOME: join(root, "codex") }, homeDir: root },
        { sources: ["codex"] },
      ),
      nodeTranscriptFileSystemLayer,
    )
    expect(found.files.map((f) => [f.path, f.compression, f.archived])).toEqual([
      [zstPath, "zstd", true],
    ])
    const r = await run(
      parseTranscriptFile(found.files[0]!, undefined, { readChunkBytes: 97 }),
      nodeTranscriptFileSystemLayer,
    )
    expect(surfaceOf(r)).toEqual(expectedSurface)
    if (hasZstd) {
      const plain = parseTranscriptBytes(
        { source: "codex", path: zstPath },
        new TextEncoder().encode(plainText),
      )
      expect(r.turns).toEqual(plain.turns)
      const cut = plainText.indexOf("\n", Math.floor(plainText.length / 2)) + 1
      const head = parseTranscriptBytes(
        { source: "codex", path: zstPath },
        new TextEncoder().encode(plainText.slice(0, cut)),
      )
      const rest = await run(
        parseTranscriptFile(found.files[0]!, head.state),
        nodeTranscriptFileSystemLayer,
      )
      expect(mergeParseResults(head, rest).turns).toEqual(plain.turns)
    }
  })

  it("a corrupt .zst is a TranscriptDecompressError, not a throw", async () => {
    const path = join(root, "bad.jsonl.zst")
    writeFileSync(path, new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3]))
    const error = await Effect.runPromise(
      Effect.flip(parseTranscriptFile({ source: "codex", path, compression: "zstd" })).pipe(
        Effect.provide(nodeTranscriptFileSystemLayer),
      ),
    )
    expect(error._tag).toBe("TranscriptDecompressError")
  })

  it("a missing file is a TranscriptReadError with its errno code", async () => {
    const error = await Effect.runPromise(
      Effect.flip(
        parseTranscriptFile({
          source: "claude",
          path: join(root, "nope.jsonl"),
          compression: "none",
        }),
      ).pipe(Effect.provide(nodeTranscriptFileSystemLayer)),
    )
    expect(error).toMatchObject({ _tag: "TranscriptReadError", code: "ENOENT", operation: "stat" })
  })
})
