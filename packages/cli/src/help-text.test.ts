import { describe, expect, it } from "vitest"
import type { CommandSpec } from "./command-spec.js"
import { batonCommand } from "./command-tree.js"
import { renderHelp, renderVersion } from "./help-text.js"

const allCommands = (command: CommandSpec, path: string[] = []): Array<[CommandSpec, string[]]> => [
  [command, path],
  ...command.subcommands.flatMap((sub) => allCommands(sub, [...path, sub.name])),
]

describe("renderHelp", () => {
  it("lists the root's commands and global options", () => {
    const help = renderHelp(batonCommand, [])
    expect(help).toContain("Usage\n  baton <command>")
    expect(help).toMatch(/doctor\s+Check this machine/)
    expect(help).toMatch(/handoff\s+Validate and hash handoff files/)
    expect(help).toMatch(/mcp\s+Run the baton MCP server on stdio/)
    expect(help).toContain("-V, --version")
    expect(help).toContain("-h, --help")
  })

  it("gives every command usage, options with --help, and exit codes", () => {
    for (const [command, path] of allCommands(batonCommand)) {
      const help = renderHelp(command, path)
      expect(help).toContain(`Usage\n  ${["baton", ...path].join(" ")}`)
      expect(help).toContain("--help")
      expect(help).toContain("Exit codes")
      expect(help.endsWith("\n")).toBe(true)
    }
  })

  it("shows a leaf command's arguments and --json", () => {
    const validate = batonCommand.subcommands.find((c) => c.name === "handoff")?.subcommands[0]
    expect(validate?.name).toBe("validate")
    const help = renderHelp(validate!, ["handoff", "validate"])
    expect(help).toContain("baton handoff validate <file> [--json]")
    expect(help).toMatch(/<file>\s+handoff JSON file, or - to read standard input/)
    expect(help).toMatch(/ {4}--json\s+print one JSON object/)
  })

  it("aligns option descriptions in one column", () => {
    const help = renderHelp(batonCommand, [])
    const helpLine = help.split("\n").find((line) => line.includes("show this help"))!
    const versionLine = help.split("\n").find((line) => line.includes("print the baton version"))!
    expect(helpLine.indexOf("show this help")).toBe(versionLine.indexOf("print the baton version"))
  })
})

describe("renderVersion", () => {
  it("prints the bare version", () => {
    expect(renderVersion("1.2.3")).toBe("1.2.3\n")
  })
})
