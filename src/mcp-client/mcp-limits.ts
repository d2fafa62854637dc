/** Most `tools/list` pages followed (a server looping on its cursor stops here). */
export const MCP_MAX_LIST_PAGES = 64
/** Delays between reconnect attempts after a dropped HTTP connection (the last one repeats). */
export const MCP_RECONNECT_DELAYS_MS = [250, 500, 1000, 2000, 4000, 8000, 15_000, 30_000]
