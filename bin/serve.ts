import { randomBytes } from 'node:crypto'
import { existsSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Agent, type PermissionRules, type WorkspaceServices } from '../adapters/index.ts'
import { memoryWorkspace } from '../adapters/memory/index.ts'
import { MODEL_OPTIONS, MODEL_USAGE, modelFromFlags } from './model-flags.ts'
import { EMBEDDINGS_OPTIONS, EMBEDDINGS_USAGE, embeddingsFromFlags } from './embeddings-flags.ts'
import { localWorkspace } from '../adapters/node/index.ts'
import { readMcpConfig } from './mcp-config.ts'

const USAGE = `isoagent serve — the HTTP API over a workspace

Usage:
  isoagent serve [--workspace DIR | s3://bucket/prefix | memory] [--port 8787]
                 [--host 127.0.0.1] [--allowed-host NAME]... [--token T]
                 [--allow|--ask|--deny RULE]...
                 [--model-provider openai|anthropic [--model-base-url U] [--model M]]
                 [--mcp-config FILE] [--net-allow-host HOST]...
                 [--embeddings-url U --embeddings-model M] [--workflows]

Options:
  -w, --workspace W   a directory (default: current directory), s3://bucket/prefix (AWS
                      settings from the environment), or memory (empty, gone at exit)
  -p, --port N        port (default 8787; 0 picks a free one)
      --host H        address to bind (default 127.0.0.1, loopback only)
      --allowed-host NAME
                      a host name requests may use in Host and Origin besides loopback
                      names and IP addresses (repeatable): behind a proxy or a DNS name,
                      e.g. --allowed-host agent.example.com, .example.com for subdomains;
                      any other name is refused with 403 (DNS rebinding)
      --token T       bearer token (default: $ISOAGENT_TOKEN, else a random one, printed)
      --allow RULE    permission rules of every session, each repeatable: a tool name or
      --ask RULE      tool(glob) on its primary argument, e.g. --ask 'bash(rm *)'
      --deny RULE     --deny 'write(secrets/**)'; deny wins over ask over allow. An ask
                      rule makes a call wait until it is approved (the web demo's dialog,
                      or POST /v1/sessions/:id/confirmations/:callId)
${MODEL_USAGE}
      --mcp-config F  MCP servers every session connects, as .mcp.json ({ "mcpServers":
                      { name: { command, args, env } | { type: "http", url, headers } } });
                      default ./.mcp.json when present. Their tools: mcp__<name>__<tool>
      --net-allow-host HOST
                      a host or address literal (optionally HOST:PORT, repeatable) that
                      network calls of the sessions may reach although it is private or
                      loopback (net.allowHosts): an MCP server added over the HTTP API,
                      download, web_search. Default none: private addresses are refused
${EMBEDDINGS_USAGE}
      --workflows     offer dynamic_workflow in every session, runs journalled in the
                      workspace (.a3s/workflow/<run_id>.jsonl, fsync'd) and driven again
                      after a restart (POST /v1/sessions/:id/workflows/:runId/drive)
  -h, --help          this text

GET / serves the web demo (no token needed for its files; it asks the API with the token
of the printed URL). Every other route but GET /v1/health needs "Authorization: Bearer <token>". Ctrl-C or SIGTERM
closes the sessions (ending running bash commands) and exits.`

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/

/** The workspace factory and a description for `--workspace`, imported lazily. */
async function workspaceOf(
  spec: string,
): Promise<{ open: () => WorkspaceServices; describe: string }> {
  if (spec === 'memory') {
    const shared = memoryWorkspace()
    return { open: () => shared, describe: 'a memory workspace' }
  }
  const s3 = /^s3:\/\/([^/]+)\/?(.*)$/.exec(spec)
  if (s3 !== null) {
    const [{ s3Workspace }, { S3Client }] = await Promise.all([
      import('../adapters/s3/s3-workspace.ts'),
      import('@aws-sdk/client-s3'),
    ])
    const env = process.env
    const client = new S3Client({
      ...(env.AWS_REGION || env.AWS_DEFAULT_REGION ? {} : { region: 'us-east-1' }),
      ...(env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL ? { forcePathStyle: true } : {}),
    })
    const bucket = s3[1]!
    const prefix = s3[2]!
    return {
      open: () => s3Workspace({ bucket, prefix, client }),
      describe: `s3://${bucket}/${prefix}`,
    }
  }
  const root = resolve(spec)
  if (!statSync(root, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`workspace ${spec} is not a directory (nor s3://... nor memory)`)
  return { open: () => localWorkspace(root), describe: root }
}

/** The built web demo: dist/web-demo beside the compiled CLI (dist/cli, dist/bin) or the repo's. */
function webDemoDirectory(): string | undefined {
  for (const rel of ['../web-demo/', '../dist/web-demo/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url))
    if (existsSync(join(dir, 'index.html')) && existsSync(join(dir, 'assets'))) return dir
  }
  return undefined
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

/** `isoagent serve ...`: serve the HTTP API until SIGINT/SIGTERM; returns the exit code. */
export async function serveCommand(
  argv: string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  let values
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: {
        workspace: { type: 'string', short: 'w', default: '.' },
        port: { type: 'string', short: 'p', default: '8787' },
        host: { type: 'string', default: '127.0.0.1' },
        'allowed-host': { type: 'string', multiple: true },
        token: { type: 'string' },
        allow: { type: 'string', multiple: true },
        ask: { type: 'string', multiple: true },
        deny: { type: 'string', multiple: true },
        ...MODEL_OPTIONS,
        'mcp-config': { type: 'string' },
        'net-allow-host': { type: 'string', multiple: true },
        ...EMBEDDINGS_OPTIONS,
        workflows: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }))
  } catch (error) {
    err.write(`isoagent serve: ${(error as Error).message}\n\n${USAGE}\n`)
    return 2
  }
  if (values.help) {
    out.write(USAGE + '\n')
    return 0
  }
  const port = Number(values.port)
  if (!/^\d+$/.test(values.port) || port > 65535) {
    err.write(`isoagent serve: --port must be a number from 0 to 65535\n`)
    return 2
  }
  const token =
    values.token ?? (process.env.ISOAGENT_TOKEN || randomBytes(24).toString('base64url'))
  if (token === '' || /\s/.test(token)) {
    err.write(`isoagent serve: the token must be non-empty, without spaces\n`)
    return 2
  }

  const permissions: PermissionRules = {
    ...(values.allow ? { allow: values.allow } : {}),
    ...(values.ask ? { ask: values.ask } : {}),
    ...(values.deny ? { deny: values.deny } : {}),
  }
  let mcpServers
  try {
    mcpServers = readMcpConfig(values['mcp-config'])
  } catch (error) {
    err.write(`isoagent serve: ${(error as Error).message}\n`)
    return 2
  }
  const embedder = embeddingsFromFlags(values, process.env)
  if (embedder.kind === 'error') {
    err.write(`isoagent serve: ${embedder.message}\n`)
    return 2
  }
  const session = {
    ...(Object.keys(permissions).length > 0 ? { permissions } : {}),
    ...(mcpServers ? { mcpServers } : {}),
    ...(values['net-allow-host'] ? { net: { allowHosts: values['net-allow-host'] } } : {}),
    ...(embedder.kind === 'embeddings' ? { retrieval: { embeddings: embedder.embeddings } } : {}),
    ...(values.workflows ? { workflows: {} } : {}),
  }

  const choice = modelFromFlags(values, process.env)
  if (choice.kind === 'error') {
    err.write(`isoagent serve: ${choice.message}\n`)
    return 2
  }
  const agent = Agent.create(choice.kind === 'model' ? { model: choice.model } : {})

  let workspace: Awaited<ReturnType<typeof workspaceOf>>
  try {
    workspace = await workspaceOf(values.workspace)
  } catch (error) {
    err.write(`isoagent serve: ${(error as Error).message}\n`)
    return 2
  }
  const [{ createApp }, { VERSION }, { serve, staticDirectory }] = await Promise.all([
    import('../edge/http/app.ts'),
    import('../edge/version.ts'),
    import('../edge/node.ts'),
  ])
  let tools: string[]
  try {
    // The probe lists the tools; it builds no retrieval index.
    const { retrieval: _index, ...probeOptions } = session as typeof session & {
      retrieval?: unknown
    }
    const probe = await agent.session(workspace.open(), probeOptions)
    tools = probe.toolNames()
    if (values.workspace !== 'memory') await probe.close()
  } catch (error) {
    err.write(`isoagent serve: ${(error as Error).message}\n`)
    return 2
  }

  const demo = webDemoDirectory()
  const app = createApp({
    workspace: () => workspace.open(),
    agent,
    token,
    session,
    ...(values['allowed-host'] ? { allowedHosts: values['allowed-host'] } : {}),
    ...(demo ? { assets: staticDirectory(demo) } : {}),
  })
  let handle
  try {
    handle = await serve(app, { port, hostname: values.host })
  } catch (error) {
    err.write(
      `isoagent serve: cannot listen on ${values.host}:${port}: ${(error as Error).message}\n`,
    )
    return 1
  }
  if (tools.includes('program')) prewarmPrograms()
  const url = handle.url
  const auth = quote(`Authorization: Bearer ${token}`)
  const id = `sed -E 's/.*"id":"([^"]+)".*/\\1/'`
  out.write(
    [
      `isoagent ${VERSION} serving ${workspace.describe}`,
      `  tools:  ${tools.join(', ')}`,
      ...(Object.keys(permissions).length > 0 ? [`  rules:  ${JSON.stringify(permissions)}`] : []),
      ...(embedder.kind === 'embeddings' ? [`  embeddings: ${embedder.describe}`] : []),
      `  model:  ${choice.kind === 'model' ? choice.describe : 'none (the chat needs --model-provider; see --help)'}`,
      ...(mcpServers ? [`  mcp:    ${Object.keys(mcpServers).join(', ')}`] : []),
      `  open:   ${url}/?token=${encodeURIComponent(token)}`,
      `  health: curl -s ${url}/v1/health`,
      `  try:    S=$(curl -s -X POST -H ${auth} ${url}/v1/sessions | ${id}) && curl -s -X POST -H ${auth} -d '{"args":{"path":"."}}' ${url}/v1/sessions/$S/tools/ls`,
      `  API:    curl -s -H ${auth} ${url}/v1/openapi.json`,
      ``,
    ].join('\n'),
  )
  if (!LOOPBACK.test(values.host))
    err.write(
      `isoagent serve: warning: bound to ${values.host}; anyone who reaches it with the token runs tools${tools.includes('bash') ? ' (bash included)' : ''} on this workspace\n`,
    )
  out.write('Ctrl-C stops the server.\n')
  await new Promise<void>((r) => handle.server.once('close', () => r()))
  return 0
}

/**
 * Start the program runner's warm worker threads (QuickJS compiled, posted to them) while the
 * server waits for its first request, so no caller's first `program` pays a thread's spawn.
 * Loaded here, not at start-up of every CLI command; a failure leaves the first call to try again.
 */
function prewarmPrograms(): void {
  void import('../adapters/node/node-program-runner.ts')
    .then(({ nodeProgramRunner }) => nodeProgramRunner.prewarm())
    .catch(() => undefined)
}
