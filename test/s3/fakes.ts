import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3'
import * as http from 'node:http'
import type { AddressInfo } from 'node:net'
import * as net from 'node:net'

/** A throwaway HTTP server on 127.0.0.1 (port chosen by the OS). */
export interface LocalServer {
  endpoint: string
  close(): Promise<void>
}

export async function listen(handler: http.RequestListener): Promise<LocalServer> {
  const server = http.createServer(handler)
  const sockets = new Set<net.Socket>()
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** An S3-style XML error answer. */
export function s3ErrorResponse(
  res: http.ServerResponse,
  status: number,
  code: string,
  headers: Record<string, string> = {},
) {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${code} from the test server</Message><RequestId>test</RequestId></Error>`
  res.writeHead(status, {
    'content-type': 'application/xml',
    'content-length': Buffer.byteLength(body),
    ...headers,
  })
  res.end(isHead(res) ? undefined : body)
}

function isHead(res: http.ServerResponse): boolean {
  return res.req?.method === 'HEAD'
}

/** Read and drop a request body, then run `then`. */
function drain(req: http.IncomingMessage, then: () => void) {
  req.on('end', then)
  req.resume()
}

/** Counts of what the conditional proxy refused. */
export interface ProxyStats {
  preconditionFailed: number
  conflicts: number
  conditionalPuts: number
}

/**
 * A proxy in front of s3rver that enforces `If-Match` / `If-None-Match` on object PUTs and on
 * CompleteMultipartUpload the way AWS S3 does, which s3rver itself ignores: a failed condition
 * is `412 PreconditionFailed`, `If-Match` on a missing key `404 NoSuchKey`, and a second
 * conditional write to a key while one is in flight `409 ConditionalRequestConflict`. With
 * `hold(ms)`, a conditional write waits up to `ms` before it checks, or until a competing
 * conditional write to the same key arrives: racing writers then overlap for sure.
 */
export async function startConditionalProxy(
  target: string,
  backend: S3Client,
): Promise<LocalServer & { stats: ProxyStats; hold(ms: number): void }> {
  const upstream = new URL(target)
  const stats: ProxyStats = { preconditionFailed: 0, conflicts: 0, conditionalPuts: 0 }
  const inFlight = new Set<string>()
  const competitorArrived = new Map<string, () => void>()
  let holdMs = 0

  const forward = (req: http.IncomingMessage, res: http.ServerResponse, done?: () => void) => {
    const request = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
        answer.on('end', () => done?.())
      },
    )
    request.on('error', () => {
      res.destroy()
      done?.()
    })
    req.pipe(request)
  }

  const server = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy')
    const ifMatch = req.headers['if-match']
    const ifNoneMatch = req.headers['if-none-match']
    const objectPut =
      req.method === 'PUT' &&
      !url.searchParams.has('uploadId') &&
      !url.searchParams.has('partNumber')
    const complete = req.method === 'POST' && url.searchParams.has('uploadId')
    if (!((objectPut || complete) && (ifMatch !== undefined || ifNoneMatch !== undefined))) {
      forward(req, res)
      return
    }
    stats.conditionalPuts++
    const [bucket, ...rest] = url.pathname.slice(1).split('/')
    const key = decodeURIComponent(rest.join('/'))
    const id = `${bucket}/${key}`
    if (inFlight.has(id)) {
      stats.conflicts++
      competitorArrived.get(id)?.()
      drain(req, () => s3ErrorResponse(res, 409, 'ConditionalRequestConflict'))
      return
    }
    inFlight.add(id)
    req.pause()
    const release = () => inFlight.delete(id)
    void (async () => {
      if (holdMs > 0) {
        let timer: NodeJS.Timeout | undefined
        await new Promise<void>((resolve) => {
          timer = setTimeout(resolve, holdMs)
          competitorArrived.set(id, resolve)
        })
        clearTimeout(timer)
        competitorArrived.delete(id)
      }
      let etag: string | undefined
      try {
        etag = (await backend.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ETag
      } catch {
        etag = undefined
      }
      const refuse = (status: number, code: string) => {
        if (status === 412) stats.preconditionFailed++
        drain(req, () => {
          release()
          s3ErrorResponse(res, status, code)
        })
      }
      if (ifNoneMatch === '*' && etag !== undefined) return refuse(412, 'PreconditionFailed')
      if (ifMatch !== undefined && etag === undefined) return refuse(404, 'NoSuchKey')
      if (ifMatch !== undefined && ifMatch !== etag) return refuse(412, 'PreconditionFailed')
      req.resume()
      forward(req, res, release)
    })()
  })
  return {
    ...server,
    stats,
    hold(ms: number) {
      holdMs = ms
    },
  }
}

/**
 * Make `client` hold each command named `command` until `count` of them are waiting (or
 * `timeoutMs` passed): writers that check before they write then surely overlap.
 */
export function barrier(client: S3Client, command: string, count: number, timeoutMs = 5000) {
  const waiting: (() => void)[] = []
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === command) {
        await new Promise<void>((resolve) => {
          waiting.push(resolve)
          if (waiting.length >= count) for (const release of waiting.splice(0)) release()
          else setTimeout(resolve, timeoutMs)
        })
      }
      return next(args)
    },
    { step: 'initialize', name: `isoagentBarrier${command}` },
  )
}

/** An http.Agent that remembers its sockets, to count the bytes a client received. */
export function countingAgent(): { agent: http.Agent; bytesReceived(): number } {
  const agent = new http.Agent({ keepAlive: true })
  const sockets: net.Socket[] = []
  const create = (options: net.NetConnectOpts) => {
    const socket = net.createConnection(options)
    sockets.push(socket)
    return socket
  }
  Object.assign(agent, { createConnection: create })
  return { agent, bytesReceived: () => sockets.reduce((sum, s) => sum + s.bytesRead, 0) }
}

/** Records every command a client sends (name and input), before retries. */
export function recordCommands(client: S3Client) {
  const log: { command: string; input: Record<string, unknown> }[] = []
  client.middlewareStack.add(
    (next, context) => async (args) => {
      log.push({
        command: String(context.commandName ?? 'unknown'),
        input: args.input as Record<string, unknown>,
      })
      return next(args)
    },
    { step: 'initialize', name: 'isoagentRecordCommands' },
  )
  return {
    log,
    count: (command?: string) =>
      command === undefined ? log.length : log.filter((e) => e.command === command).length,
    reset: () => {
      log.length = 0
    },
  }
}
