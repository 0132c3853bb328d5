// The shipped assets/sign-scan.wasm is what assets/sign-scan.wat compiles to (wabt): the text is
// the reviewable source, the binary is never edited by hand.
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

describe("assets/sign-scan.wasm", () => {
  it("is the compiled assets/sign-scan.wat", async () => {
    const script: string = "../scripts/build-sign-scan-wasm.mjs"
    const { compileSignScan } = (await import(script)) as {
      readonly compileSignScan: () => Promise<Uint8Array>
    }
    const shipped = readFileSync(
      fileURLToPath(new URL("../assets/sign-scan.wasm", import.meta.url)),
    )
    expect(new Uint8Array(shipped)).toEqual(new Uint8Array(await compileSignScan()))
  })
})
