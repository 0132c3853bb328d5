/**
 * @baton/wake — Long tasks that outlive a quota window: checkpoint, memory capsule, rate-limit watcher, bounded continuation.
 * Nothing is exported yet; the capability lands in its own issue.
 */
export {}
