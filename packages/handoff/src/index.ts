/**
 * @baton/handoff — The handoff contract: schema, canonical encoding, SHA-256 binding, secret scan and continuation text.
 * Nothing is exported yet; the capability lands in its own issue.
 */
export {}
