// The signature decision table: every row is one situation the indexer meets on disk.
import { describe, expect, it } from "vitest"
import { decideFileChange, needsPrefixCheck, signatureKey } from "./file-change.js"
import type { FileChange, SignatureNow, SignatureStored } from "./file-change.js"

const stored: SignatureStored = {
  size: 10_000,
  mtimeMs: 1000,
  inode: 7,
  headHash: "h",
  status: "indexed",
  resumable: true,
  failedSignature: null,
  parserVersion: 1,
}
const now: SignatureNow = {
  size: 10_000,
  mtimeMs: 1000,
  ino: 7,
  headHash: "h",
  compression: "none",
}

const table: ReadonlyArray<
  readonly [string, SignatureStored | undefined, SignatureNow, boolean, FileChange]
> = [
  ["never seen", undefined, now, false, "new"],
  ["same signature", stored, now, false, "unchanged"],
  ["grew, same inode and head", stored, { ...now, size: 12_000, mtimeMs: 2000 }, false, "append"],
  [
    "grew, small file, head moved, prefix matches",
    { ...stored, size: 100 },
    { ...now, size: 200, headHash: "h2" },
    true,
    "append",
  ],
  [
    "grew, head moved, prefix differs",
    { ...stored, size: 100 },
    { ...now, size: 200, headHash: "h2" },
    false,
    "rewrite",
  ],
  ["head changed", stored, { ...now, headHash: "x", mtimeMs: 2000 }, false, "rewrite"],
  ["inode changed (replaced)", stored, { ...now, ino: 8 }, false, "rewrite"],
  ["truncated", stored, { ...now, size: 5000, mtimeMs: 2000 }, false, "rewrite"],
  ["same size, touched", stored, { ...now, mtimeMs: 2000 }, false, "rewrite"],
  ["grew but compressed", stored, { ...now, size: 12_000, compression: "zstd" }, false, "rewrite"],
  ["stored without parse state", { ...stored, resumable: false }, now, false, "new"],
  ["failed last time, unchanged since", { ...stored, status: "failed" }, now, false, "append"],
  [
    "quarantined, unchanged since",
    { ...stored, status: "quarantined", failedSignature: signatureKey(now) },
    now,
    false,
    "skip-quarantined",
  ],
  [
    "quarantined, changed since",
    { ...stored, status: "quarantined", failedSignature: "old" },
    { ...now, size: 11_000 },
    false,
    "append",
  ],
  [
    "forgotten",
    { ...stored, status: "forgotten" },
    { ...now, size: 11_000 },
    false,
    "skip-forgotten",
  ],
  ["missing, back unchanged", { ...stored, status: "missing" }, now, false, "append"],
  ["parsed by an older parser, unchanged", { ...stored, parserVersion: 0 }, now, false, "reparse"],
  [
    "parsed by an older parser, grew",
    { ...stored, parserVersion: 0 },
    { ...now, size: 12_000, mtimeMs: 2000 },
    false,
    "reparse",
  ],
  [
    "parsed by an older parser, missing and back",
    { ...stored, parserVersion: 0, status: "missing" },
    now,
    false,
    "reparse",
  ],
  [
    "parsed by an older parser, forgotten",
    { ...stored, parserVersion: 0, status: "forgotten" },
    now,
    false,
    "skip-forgotten",
  ],
  [
    "parsed by an older parser, quarantined since",
    { ...stored, parserVersion: 0, status: "quarantined", failedSignature: signatureKey(now) },
    now,
    false,
    "skip-quarantined",
  ],
  ["parsed by a newer parser", { ...stored, parserVersion: 2 }, now, false, "unchanged"],
]

describe("decideFileChange", () => {
  it.each(table)("%s", (_name, before, after, prefix, expected) => {
    expect(decideFileChange(before, after, prefix, 1)).toBe(expected)
  })

  it("asks for a prefix check only for a grown small file whose head hash moved", () => {
    expect(
      needsPrefixCheck({ ...stored, size: 100 }, { ...now, size: 200, headHash: "h2" }, 4096),
    ).toBe(true)
    expect(needsPrefixCheck(stored, { ...now, size: 20_000, headHash: "h2" }, 4096)).toBe(false)
    expect(
      needsPrefixCheck(
        { ...stored, size: 100 },
        { ...now, size: 200, ino: 9, headHash: "h2" },
        4096,
      ),
    ).toBe(false)
    expect(needsPrefixCheck(undefined, now, 4096)).toBe(false)
  })
})
