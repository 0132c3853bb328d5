#!/usr/bin/env node
// Regenerates src/generated/ from the pinned codex binary (the testkit's @openai/codex):
//   ts/            `codex app-server generate-ts` output as declaration files (`.d.ts`: type-checked,
//                  never emitted into dist), relative imports given `.js` (NodeNext)
//   json-schema/   the v2 bundle from `codex app-server generate-json-schema`
//   protocol-surface.json   the facts Baton relies on, extracted by dist/compatibility.js
//   source.json    which binary and version produced them
//   json-schema/ also keeps ServerRequest.json, which the 0.169.0 v2 bundle lacks
// Usage: pnpm --filter @baton/ipc-codex generate   (BATON_CODEX_BINARY overrides the binary)
import { execFile } from "node:child_process"
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const run = promisify(execFile)
const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const generatedDir = join(packageDir, "src", "generated")

const pinnedCodexBinary = () => {
  if (process.env.BATON_CODEX_BINARY) return process.env.BATON_CODEX_BINARY
  const testkit = createRequire(join(packageDir, "..", "testkit", "package.json"))
  const codexPackageJson = testkit.resolve("@openai/codex/package.json")
  const triples = {
    "linux-x64": "x86_64-unknown-linux-musl",
    "linux-arm64": "aarch64-unknown-linux-musl",
    "darwin-x64": "x86_64-apple-darwin",
    "darwin-arm64": "aarch64-apple-darwin",
  }
  const key = `${process.platform}-${process.arch}`
  try {
    const platformPackageJson = createRequire(codexPackageJson).resolve(
      `@openai/codex-${key}/package.json`,
    )
    return join(dirname(platformPackageJson), "vendor", triples[key], "bin", "codex")
  } catch {
    return join(packageDir, "..", "testkit", "node_modules", ".bin", "codex")
  }
}

const addJsExtensions = async (dir) => {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      await addJsExtensions(path)
      continue
    }
    if (!entry.name.endsWith(".ts") || entry.name.endsWith(".d.ts")) continue
    const text = await readFile(path, "utf8")
    const specifiers = [...text.matchAll(/from "(\.{1,2}\/[^"]*)"/g)].map((m) => m[1])
    let out = text
    for (const specifier of new Set(specifiers)) {
      if (specifier.endsWith(".js")) continue
      const target = resolve(dir, specifier)
      const isDir = await stat(target).then(
        (s) => s.isDirectory(),
        () => false,
      )
      out = out.replaceAll(
        `from "${specifier}"`,
        `from "${specifier}${isDir ? "/index.js" : ".js"}"`,
      )
    }
    // Declaration files: type-only, so tsc neither emits nor re-checks them (skipLibCheck).
    await writeFile(path.replace(/\.ts$/, ".d.ts"), out)
    await rm(path)
  }
}

const binary = pinnedCodexBinary()
const { stdout: versionText } = await run(binary, ["--version"])
const version = /(\d+\.\d+\.\d+\S*)/.exec(versionText)?.[1] ?? versionText.trim()
const work = await mkdtemp(join(tmpdir(), "baton-codex-schema-"))
try {
  await run(binary, ["app-server", "generate-ts", "--out", join(work, "ts")], { timeout: 60_000 })
  await run(binary, ["app-server", "generate-json-schema", "--out", join(work, "json")], {
    timeout: 60_000,
  })
  await addJsExtensions(join(work, "ts"))
  await rm(join(generatedDir, "ts"), { recursive: true, force: true })
  await rm(join(generatedDir, "json-schema"), { recursive: true, force: true })
  await mkdir(join(generatedDir, "json-schema"), { recursive: true })
  await cp(join(work, "ts"), join(generatedDir, "ts"), { recursive: true })
  const bundle = "codex_app_server_protocol.v2.schemas.json"
  await cp(join(work, "json", bundle), join(generatedDir, "json-schema", bundle))
  // 0.169.0's v2 bundle has no ServerRequest root; keep the per-type file next to it.
  await cp(
    join(work, "json", "ServerRequest.json"),
    join(generatedDir, "json-schema", "ServerRequest.json"),
  )
  await writeFile(
    join(generatedDir, "source.json"),
    JSON.stringify(
      {
        codexVersion: version,
        commands: ["codex app-server generate-ts", "codex app-server generate-json-schema"],
      },
      null,
      2,
    ) + "\n",
  )
  console.log(`generated protocol types from codex ${version} (${binary})`)
  // The surface baseline needs the compiled checker.
  const tsc = createRequire(join(packageDir, "package.json")).resolve("typescript/bin/tsc")
  // Another engineer's in-progress file may break the build; the checker module is all we need.
  await run(process.execPath, [tsc, "-b"], { cwd: packageDir }).catch((error) =>
    console.warn(`tsc -b reported errors; using dist as built:\n${error.stdout ?? error}`),
  )
  const { Effect } = await import("effect")
  const { extractProtocolSurface, loadSchemaBundle } = await import(
    join(packageDir, "dist", "compatibility.js")
  )
  const schema = await Effect.runPromise(loadSchemaBundle(join(generatedDir, "json-schema")))
  await writeFile(
    join(generatedDir, "protocol-surface.json"),
    JSON.stringify(extractProtocolSurface(schema), null, 2) + "\n",
  )
  console.log("wrote src/generated/protocol-surface.json")
} finally {
  await rm(work, { recursive: true, force: true })
}
