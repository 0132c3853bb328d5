/**
 * `baton recall search`, ahead of its modules: when the search will embed its query with
 * USE-lite, the model starts loading in its worker (~1 s) while this process loads the search
 * command's modules (~0.4 s), instead of after them. Imports nothing heavy itself.
 */
import { homedir } from "node:os"
import { join } from "node:path"
import { resolveDataDir } from "./baton-paths.js"
import type { CommandRunner } from "./command-spec.js"
import { has } from "./recall-flags.js"

/** Runs `baton recall search` (see `recall-command.ts`), prewarming USE-lite when it is needed. */
export const runRecallSearchEarly: CommandRunner = async (invocation, io) => {
  if (!has(invocation, "lexical-only")) {
    const { prewarmUseLiteForSearch, RECALL_DATABASE_FILE } =
      await import("@baton/recall-index/prewarm")
    const dataDir = resolveDataDir(io.env, homedir())
    // A relative BATON_DATA_DIR is refused by the search itself: nothing to prewarm.
    if (dataDir.relative !== true)
      prewarmUseLiteForSearch(io.env, join(dataDir.path, RECALL_DATABASE_FILE))
  }
  return (await import("./recall-command.js")).runRecallSearch(invocation, io)
}
