import { describe, expect, it } from "vitest"
import {
  formatDuration,
  progressWriter,
  renderProgress,
  terminalColumns,
} from "./recall-progress.js"

/** An enabled writer on an 80-column terminal recording what it writes, with a settable clock. */
const recording = () => {
  const out: Array<string> = []
  let now = 0
  const writer = progressWriter(
    true,
    (t) => out.push(t),
    () => now,
    () => 80,
  )
  return { out, writer, at: (ms: number) => void (now = ms) }
}

describe("recall progress", () => {
  it("renders files, turns and an ETA from the rate so far", () => {
    const line = renderProgress(
      { phase: "indexing", filesDone: 25, filesTotal: 100, turns: 1234, startedAt: 0 },
      10_000,
    )
    expect(line).toBe("indexing  [#####---------------] 25/100 files · 1,234 turns · ETA 30s")
    expect(
      renderProgress({ phase: "embedding", done: 3000, total: 12000, startedAt: 0 }, 60_000),
    ).toBe("embedding [#####---------------] 3,000/12,000 chunks · ETA 3m 00s")
    expect(renderProgress({ phase: "embedding", done: 5, total: 5, startedAt: 0 }, 1000)).toBe(
      "embedding [####################] 5/5 chunks",
    )
    expect(renderProgress({ phase: "building-indexes", filesTotal: 2000 }, 1000)).toBe(
      "indexing  [####################] 2,000 files written · building search indexes…",
    )
    expect(renderProgress({ phase: "converting-vectors", vectors: 2_090_000 }, 1000)).toBe(
      "embedding storing 2,090,000 vectors of an earlier version as int8 (once)…",
    )
  })

  it("never exceeds the terminal width", () => {
    const line = renderProgress(
      { phase: "indexing", filesDone: 1, filesTotal: 3, turns: 9, startedAt: 0 },
      2000,
      30,
    )
    expect(line.length).toBeLessThanOrEqual(30)
    expect(line.endsWith("…")).toBe(true)
  })

  it("draws at the terminal's width, else COLUMNS, else 80 (an unsized pseudo-terminal has 0)", () => {
    expect(terminalColumns(132, { COLUMNS: "40" })).toBe(132)
    expect(terminalColumns(0, { COLUMNS: "40" })).toBe(40)
    expect(terminalColumns(undefined, { COLUMNS: "40" })).toBe(40)
    expect(terminalColumns(0, {})).toBe(80)
    expect(terminalColumns(0, { COLUMNS: "wide" })).toBe(80)
    expect(terminalColumns(0, { COLUMNS: "-3" })).toBe(80)
  })

  it("formats durations", () => {
    expect(formatDuration(45_000)).toBe("45s")
    expect(formatDuration(185_000)).toBe("3m 05s")
    expect(formatDuration(4_320_000)).toBe("1h 12m")
  })

  it("redraws at most every 100 ms, ends with the last state and a newline, or writes nothing", () => {
    const { out, writer, at } = recording()
    const state = (done: number) =>
      ({ phase: "indexing", filesDone: done, filesTotal: 10, turns: done, startedAt: 0 }) as const
    writer.update(state(1))
    at(50)
    writer.update(state(2))
    at(120)
    writer.update(state(3))
    writer.update(state(4))
    writer.done()
    expect(out.map((t) => /(\d+)\/10/.exec(t)?.[1] ?? t)).toEqual(["1", "3", "4", "\n"])
    expect(out[0]?.startsWith("\r")).toBe(true)
    const silent: Array<string> = []
    const off = progressWriter(
      false,
      (t) => silent.push(t),
      () => 0,
      () => 80,
    )
    off.update(state(1))
    off.done()
    expect(silent).toEqual([])
  })

  it("draws a new phase at once, however soon after the last redraw", () => {
    const { out, writer, at } = recording()
    writer.update({ phase: "indexing", filesDone: 10, filesTotal: 10, turns: 5, startedAt: 0 })
    at(10)
    writer.update({ phase: "building-indexes", filesTotal: 10 })
    expect(out).toHaveLength(2)
    expect(out[1]).toContain("building search indexes")
    at(20)
    writer.update({ phase: "building-indexes", filesTotal: 10 })
    expect(out).toHaveLength(2)
  })

  it("writes a note on its own line above the bar, then draws the bar again", () => {
    const { out, writer } = recording()
    writer.note("baton: before any bar")
    writer.update({ phase: "embedding", done: 1, total: 4, startedAt: 0 })
    writer.note("baton: retrying")
    expect(out).toEqual([
      "baton: before any bar\n",
      "\rembedding [#####---------------] 1/4 chunks\u001b[K",
      "\r\u001b[Kbaton: retrying\n",
      "\rembedding [#####---------------] 1/4 chunks\u001b[K",
    ])
  })
})
