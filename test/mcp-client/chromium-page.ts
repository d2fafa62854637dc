// The page side of chromium.test.ts: the MCP client scenario over a browser workspace
// (IndexedDB), against a Streamable HTTP server on another loopback origin (CORS).
import { browserWorkspace } from '../../adapters/browser/index.ts'
import { runMcpScenario } from './mcp-scenario.ts'

;(globalThis as unknown as { isoagentPage: unknown }).isoagentPage = {
  mcp: (url: string) => runMcpScenario(browserWorkspace({ name: `mcp-${Date.now()}` }), url),
}
