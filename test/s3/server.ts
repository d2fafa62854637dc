import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

/** Client settings for s3rver (its V4 signatures are not checked, but the access key id is). */
export function s3rverConfig(endpoint: string, overrides: S3ClientConfig = {}): S3ClientConfig {
  return {
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    // s3rver stores aws-chunked framing as data when the SDK streams bodies with checksums.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...overrides,
  }
}

/** An s3rver on 127.0.0.1 (port chosen by the OS), its data in a temp directory. */
export interface S3rverHandle {
  endpoint: string
  port: number
  /** A new client for this server. */
  client(overrides?: S3ClientConfig): S3Client
  close(): Promise<void>
}

/**
 * Starts s3rver 3.7.1 in a child Node process with `--openssl-legacy-provider` (see
 * s3rver-child.mjs: its continuation tokens need DES) and waits until it listens.
 */
export async function startS3rver(buckets: string[]): Promise<S3rverHandle> {
  const directory = mkdtempSync(join(tmpdir(), 'isoagent-s3rver-'))
  const script = fileURLToPath(new URL('./s3rver-child.mjs', import.meta.url))
  const child = spawn(
    process.execPath,
    ['--openssl-legacy-provider', script, directory, ...buckets],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    lines.once('line', (line) => {
      lines.close()
      resolve((JSON.parse(line) as { port: number }).port)
    })
    child.once('exit', (code) => reject(new Error(`s3rver exited early (code ${code})`)))
    child.once('error', reject)
  })
  const endpoint = `http://127.0.0.1:${port}`
  const clients: S3Client[] = []
  return {
    endpoint,
    port,
    client(overrides) {
      const client = new S3Client(s3rverConfig(endpoint, overrides))
      clients.push(client)
      return client
    },
    async close() {
      for (const client of clients) client.destroy()
      child.stdin!.end()
      child.kill('SIGTERM')
      await exited
      rmSync(directory, { recursive: true, force: true })
    },
  }
}

const encoder = new TextEncoder()

/** Put `files` (text or bytes) under `prefix` directly, bypassing any workspace. */
export async function seed(
  client: S3Client,
  bucket: string,
  prefix: string,
  files: Record<string, string | Uint8Array>,
) {
  await Promise.all(
    Object.entries(files).map(([path, content]) => {
      const Body = typeof content === 'string' ? encoder.encode(content) : content
      return client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: prefix + path,
          Body,
          ContentLength: Body.length,
        }),
      )
    }),
  )
}

/** Every key under `prefix` (all pages), straight from the store. */
export async function rawKeys(client: S3Client, bucket: string, prefix: string) {
  const keys: string[] = []
  let token: string | undefined
  do {
    const out = await client.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix,
        ...(token ? { ContinuationToken: token } : {}),
      }),
    )
    for (const c of out.Contents ?? []) if (c.Key !== undefined) keys.push(c.Key)
    token = out.IsTruncated ? out.NextContinuationToken : undefined
  } while (token !== undefined)
  return [...new Set(keys)].sort()
}

/** One object's bytes straight from the store, or undefined. */
export async function rawBytes(client: S3Client, bucket: string, key: string) {
  try {
    const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
    return new Uint8Array(await out.Body!.transformToByteArray())
  } catch (error) {
    if ((error as { name?: string }).name === 'NoSuchKey') return undefined
    throw error
  }
}

/** Delete every key under `prefix`. */
export async function wipe(client: S3Client, bucket: string, prefix: string) {
  const keys = await rawKeys(client, bucket, prefix)
  for (let i = 0; i < keys.length; i += 1000) {
    await client.send(
      new DeleteObjectsCommand({
        Bucket: bucket,
        Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
      }),
    )
  }
}

let sequence = 0
/** A fresh, unique prefix for one test's workspace. */
export function freshPrefix(base = ''): string {
  sequence++
  return `${base}t${sequence}-${Math.random().toString(36).slice(2, 8)}/`
}
