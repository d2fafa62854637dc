// The MCP client in a session over an S3 workspace (s3rver on loopback): the same names, status
// and results as over a memory workspace, the MCP answer written into the bucket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryWorkspace, WorkspacePath } from '../../adapters/index.ts'
import { s3Workspace } from '../../adapters/s3/index.ts'
import { startS3rver, type S3rverHandle } from '../s3/server.ts'
import { streamableServer, type LoopbackMcp } from './http-servers.ts'
import { runMcpScenario } from './mcp-scenario.ts'
import { toolServer } from './fixtures/tool-server.mjs'

const BUCKET = 'mcp-client-ws'
let s3: S3rverHandle
let mcp: LoopbackMcp
beforeAll(async () => {
  ;[s3, mcp] = await Promise.all([startS3rver([BUCKET]), streamableServer(() => toolServer())])
}, 60_000)
afterAll(async () => {
  await mcp?.close()
  await s3?.close()
})

describe('MCP client over an S3 workspace', () => {
  it('gives the same results as over memory; the answer lands in the bucket', async () => {
    const workspace = s3Workspace({ bucket: BUCKET, prefix: 'ws/', client: s3.client() })
    const inS3 = await runMcpScenario(workspace, mcp.url)
    const inMemory = await runMcpScenario(memoryWorkspace({}), mcp.url)
    expect(inS3.status).toEqual([{ name: 'srv', connected: true, toolCount: 12 }])
    expect(inS3).toEqual(inMemory)
    const again = s3Workspace({ bucket: BUCKET, prefix: 'ws/', client: s3.client() })
    const bytes = await again.read(WorkspacePath.parse('mcp-out.txt'))
    expect(new TextDecoder().decode(bytes)).toBe('echo: to disk')
  }, 60_000)
})
