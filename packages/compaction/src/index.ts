/**
 * @baton/compaction — Compaction with a verified handoff and exactly one continuation turn.
 * Nothing is exported yet; the capability lands in its own issue.
 */
export {}
