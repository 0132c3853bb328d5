// The recall commands' help states the limits the library applies, from its own constants.
import { GREP_REGEX_STOP_MS, GREP_SCAN_MS } from "@baton/recall-index/grep-limits"
import { describe, expect, it } from "vitest"
import { renderHelp } from "./help-text.js"
import { recallCommand } from "./recall-command-spec.js"

const help = (name: string): string => {
  const command = recallCommand.subcommands.find((sub) => sub.name === name)
  if (command === undefined) throw new Error(`no recall ${name}`)
  // Help lines wrap: read it as one line of words.
  return renderHelp(command, ["recall", name]).replace(/\s+/g, " ")
}

describe("recall help", () => {
  it("gives grep's real stop times: the runaway regex's and the scan's", () => {
    const grep = help("grep")
    expect(GREP_REGEX_STOP_MS).toBeGreaterThan(GREP_SCAN_MS)
    expect(grep).toContain(
      `one that still runs too long is stopped with an error after ${GREP_REGEX_STOP_MS / 1000} seconds`,
    )
    expect(grep).toContain(
      `A scan stops after ${GREP_SCAN_MS / 1000} seconds with the matches found so far`,
    )
  })

  it("states search's query limit", () => {
    expect(help("search")).toContain("a query is at most 2,000 characters")
  })
})
