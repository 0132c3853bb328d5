import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { embedderConfigFromEnvironment } from "./embedder-config.js"
import { searchUsesUseLite } from "./use-lite-prewarm.js"

const dir = mkdtempSync(join(tmpdir(), "baton-prewarm-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A database whose `meta` names `fingerprint` as the last embedded space. */
const indexEmbeddedWith = (name: string, fingerprint: string): string => {
  const path = join(dir, `${name}.db`)
  const db = new Database(path)
  db.exec("create table meta (key text primary key, value text not null)")
  db.prepare("insert into meta values ('embedder_fingerprint', ?)").run(fingerprint)
  db.close()
  return path
}

describe("searchUsesUseLite", () => {
  const useLite = indexEmbeddedWith("lite", "embedded/use-lite/512/seg48x8")
  const table = indexEmbeddedWith("static", "embedded/use-static-15000/256")

  it("follows the index's space under auto, and a named embedder otherwise", () => {
    expect(searchUsesUseLite({}, useLite)).toBe(true)
    expect(searchUsesUseLite({ BATON_EMBEDDER: "auto" }, table)).toBe(false)
    expect(searchUsesUseLite({ BATON_EMBEDDER: "use-lite" }, join(dir, "none.db"))).toBe(true)
    expect(searchUsesUseLite({ BATON_EMBEDDER: "use-static" }, useLite)).toBe(false)
    expect(searchUsesUseLite({ BATON_EMBEDDER: "none" }, useLite)).toBe(false)
    expect(searchUsesUseLite({}, join(dir, "none.db"))).toBe(false)
  })

  it("says no, without throwing, when the file is not an index", () => {
    const bogus = join(dir, "bogus.db")
    writeFileSync(bogus, "not a database")
    expect(searchUsesUseLite({}, bogus)).toBe(false)
    const empty = join(dir, "empty.db")
    new Database(empty).close()
    expect(searchUsesUseLite({}, empty)).toBe(false)
  })

  it("reads BATON_EMBEDDER as the embedder configuration does", async () => {
    for (const value of [
      "",
      " ",
      "auto",
      "AUTO",
      "embedded",
      "default",
      " use-lite ",
      "use-static",
      "none",
      "off",
    ]) {
      const config = await Effect.runPromise(
        embedderConfigFromEnvironment({ BATON_EMBEDDER: value }),
      )
      const embedsUseLite =
        config._tag === "Embedded" && (config.name === "auto" || config.name === "use-lite")
      expect([value, searchUsesUseLite({ BATON_EMBEDDER: value }, useLite)]).toEqual([
        value,
        embedsUseLite,
      ])
    }
  })
})
