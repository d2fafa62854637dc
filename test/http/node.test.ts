import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  Agent,
  anthropic,
  memoryWorkspace,
  openAICompatible,
  type WorkspaceServices,
} from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import { createApp } from '../../edge/index.ts'
import { serve } from '../../edge/node.ts'
import { fuzzCases } from './fuzz-cases.ts'
import { httpCases, type CaseServer, type CaseServerConfig } from './http-cases.ts'
import { workflowCases } from './workflow-cases.ts'

/** A server on a free loopback port over a fresh workspace made by `open`. */
function starter(open: () => { workspace: () => WorkspaceServices; cleanup?: () => void }) {
  return async (config: CaseServerConfig): Promise<CaseServer> => {
    const { workspace, cleanup } = open()
    const app = createApp({
      workspace,
      token: config.token,
      session: {
        permissions: config.permissions,
        ...(config.workflows ? { workflows: {} } : {}),
      },
      ...(config.maxSessions !== undefined ? { maxSessions: config.maxSessions } : {}),
      ...(config.sessionIdleMs !== undefined ? { sessionIdleMs: config.sessionIdleMs } : {}),
      ...(config.model
        ? {
            agent: Agent.create({
              model: (config.model.protocol === 'openai' ? openAICompatible : anthropic)({
                baseURL: config.model.baseURL,
                apiKey: 'sk-test',
                model: 'fake-1',
                retryDelayMs: 5,
              }),
            }),
          }
        : {}),
    })
    const handle = await serve(app, { port: 0, hostname: '127.0.0.1', handleSignals: false })
    return {
      baseUrl: handle.url,
      close: async () => {
        await handle.close()
        cleanup?.()
      },
    }
  }
}

const memory = starter(() => {
  const shared = memoryWorkspace()
  return { workspace: () => shared }
})
const local = starter(() => {
  const root = mkdtempSync(join(tmpdir(), 'isoagent-http-'))
  return {
    workspace: () => localWorkspace(root),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  }
})

httpCases('Node server, memory workspace', memory, {
  tools: [
    'read',
    'write',
    'edit',
    'patch',
    'ls',
    'search',
    'git',
    'web_fetch',
    'web_search',
    'batch',
    'program',
  ],
})
httpCases('Node server, local disk', local, {
  modelProtocol: 'anthropic',
  tools: [
    'read',
    'write',
    'edit',
    'patch',
    'ls',
    'search',
    'bash',
    'git',
    'download',
    'web_fetch',
    'web_search',
    'batch',
    'program',
  ],
})
fuzzCases('Node server, local disk', local)
workflowCases('Node server, local disk', local, { sharedWorkspace: true })
workflowCases('Node server, memory workspace', memory, {
  sharedWorkspace: true,
})
