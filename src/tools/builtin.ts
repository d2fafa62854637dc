import { bashTool } from './bash/bash.ts'
import { batchTool } from './batch.ts'
import { downloadTool } from './download/download.ts'
import { editTool } from './edit.ts'
import { GENERATE_OBJECT, generateObjectParameters } from './generate-object/generate-object.ts'
import { gitTool } from './git/git.ts'
import { lsTool } from './ls.ts'
import { patchTool } from './patch.ts'
import { programTool } from './program/program.ts'
import { readTool } from './read.ts'
import { searchTool } from './search/search.ts'
import type { JsonSchema, ToolSpec } from '../kernel/tool-spec.ts'
import { webFetchTool } from './web-fetch/web-fetch.ts'
import { webSearchTool } from './web-search/web-search.ts'
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
  webFetchTool,
  webSearchTool,
  batchTool,
  programTool,
] as unknown as readonly ToolSpec<Record<string, unknown>>[]

/**
 * Built-in tools a session offers only when its Agent has a model, built per session by their
 * factories (session-tools.ts); their argument schemas are precompiled like the others'.
 */
export const modelToolSchemas: readonly { name: string; parameters: JsonSchema }[] = [
  { name: GENERATE_OBJECT, parameters: generateObjectParameters },
]
