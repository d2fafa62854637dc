// Runtime wiring of Node.js, imported for its effect by every package entry Node resolves (the
// package's `"node"` export condition): what a session uses when its options name nothing is
// decided by the runtime, never by which other entry happened to be imported (DESIGN, "Runtime
// wiring").
import {
  setDefaultHttpTransport,
  setDefaultSymbolExtractor,
  setMcpStdioLauncher,
} from '../../src/index.ts'
import { nodeStdioMcpLauncher } from './stdio-mcp-transport.ts'
import { nodeHttpTransport } from './node-http-transport.ts'
import { nodeTreeSitterSymbols } from './tree-sitter.ts'

// web_fetch, download, web_search: names resolved here, every answer checked and the connection
// pinned to it (`address_check: "resolved"`). undici itself loads at the first request.
setDefaultHttpTransport(nodeHttpTransport)

// program: QuickJS compiled once per process; guests in worker threads terminated at their
// deadline.
import './program-wiring.ts'

// MCP servers over stdio: children in their own process groups, killed with the session.
setMcpStdioLauncher(nodeStdioMcpLauncher)

// hybrid search's symbol channel: tree-sitter, grammars read from node_modules at first use.
setDefaultSymbolExtractor(nodeTreeSitterSymbols)
