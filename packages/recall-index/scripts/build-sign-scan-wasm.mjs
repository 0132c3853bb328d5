// Builds assets/sign-scan.wasm from assets/sign-scan.wat with wabt (a devDependency); the
// package ships the .wasm, so nothing is compiled at install or run time. A unit test checks
// that the shipped binary is this script's output. Usage: node scripts/build-sign-scan-wasm.mjs
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import wabt from "wabt"

export const compileSignScan = async () => {
  const source = readFileSync(new URL("../assets/sign-scan.wat", import.meta.url), "utf8")
  const module = (await wabt()).parseWat("sign-scan.wat", source)
  try {
    module.validate()
    return Buffer.from(module.toBinary({ write_debug_names: false }).buffer)
  } finally {
    module.destroy()
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = new URL("../assets/sign-scan.wasm", import.meta.url)
  const binary = await compileSignScan()
  writeFileSync(out, binary)
  console.log(`wrote ${fileURLToPath(out)} (${binary.length} bytes)`)
}
