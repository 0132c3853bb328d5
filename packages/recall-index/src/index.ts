/**
 * @baton/recall-index — A local index of past Claude Code and Codex sessions, searched by meaning and by words.
 * Nothing is exported yet; the capability lands in its own issue.
 */
export {}
