import { bashTool } from './bash/bash.ts'
import { batchTool } from './batch.ts'
import { downloadTool } from './download/download.ts'
import { editTool } from './edit.ts'
import { gitTool } from './git/git.ts'
import { lsTool } from './ls.ts'
import { patchTool } from './patch.ts'
import { programTool } from './program/program.ts'
import { readTool } from './read.ts'
import { searchTool } from './search/search.ts'
import type { ToolSpec } from '../kernel/tool-spec.ts'
import { webFetchTool } from './web-fetch/web-fetch.ts'
import { writeTool } from './write.ts'

/** Every built-in tool, in registration order. A session offers those its workspace can serve. */
export const builtinTools = [
  readTool,
  writeTool,
  editTool,
  patchTool,
  lsTool,
  searchTool,
  bashTool,
  gitTool,
  downloadTool,
  batchTool,
  programTool,
  webFetchTool,
] as unknown as readonly ToolSpec<Record<string, unknown>>[]
