/**
 * Per-method protocol versions of the extension IPC, kept as data (not constants scattered in
 * code) so a new extension build can be met with an explicit, reviewed override. The defaults
 * are what Rekall sends and verified against extension 26.901.22334: targeted
 * `thread-follower-*` requests carry envelope `hostId`, which puts them at the table version
 * + 1 (compact 2, start-turn 3). Interrupt is 4: the table's version with `expectedTurnId` (3 is
 * the variant without it); Rekall never sends it, so it is unverified against a real build.
 * Never guesses: an unknown method has no version.
 */

/** The methods this client speaks. */
export type ExtensionMethod =
  | "initialize"
  | "thread-owner-discovery"
  | "thread-stream-following-changed"
  | "thread-stream-state-changed"
  | "thread-follower-compact-thread"
  | "thread-follower-start-turn"
  | "thread-follower-interrupt-turn"

/** Version per method. */
export type ExtensionMethodVersions = { readonly [M in ExtensionMethod]: number }

/** The verified defaults (see the module header). */
export const DEFAULT_EXTENSION_METHOD_VERSIONS: ExtensionMethodVersions = {
  initialize: 0,
  "thread-owner-discovery": 1,
  "thread-stream-following-changed": 1,
  "thread-stream-state-changed": 11,
  "thread-follower-compact-thread": 2,
  "thread-follower-start-turn": 3,
  "thread-follower-interrupt-turn": 4,
}

/** The defaults with per-method overrides applied (non-integer or negative overrides ignored). */
export const extensionMethodVersions = (
  overrides: Partial<ExtensionMethodVersions> = {},
): ExtensionMethodVersions => {
  const out: { [M in ExtensionMethod]: number } = { ...DEFAULT_EXTENSION_METHOD_VERSIONS }
  for (const method of Object.keys(DEFAULT_EXTENSION_METHOD_VERSIONS) as Array<ExtensionMethod>) {
    const value = overrides[method]
    if (value !== undefined && Number.isInteger(value) && value >= 0) out[method] = value
  }
  return out
}
