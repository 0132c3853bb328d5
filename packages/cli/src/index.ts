/**
 * @baton/cli — The `baton` command-line interface.
 * Nothing is exported yet; the capability lands in its own issue.
 */
export {}
