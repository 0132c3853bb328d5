/**
 * @baton/testkit — Private test kit: loopback mock model servers and launchers for the real Codex and Claude Code binaries.
 * Nothing is exported yet; the capability lands in its own issue.
 */
export {}
