/**
 * @baton/mcp-server — The one `baton` MCP server: tools registered by the capability packages.
 * Nothing is exported yet; the capability lands in its own issue.
 */
export {}
