import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3'
import { IsoagentError } from '../../src/index.ts'
import { mapLimit } from '../../src/workspace/adapter-kit.ts'

const MAX_PARTS = 10_000
const PART_CONCURRENCY = 4

/** Where a multipart upload goes and how it is cut. */
export interface MultipartTarget {
  client: S3Client
  bucket: string
  key: string
  /** Bytes of each part (the last may be shorter); raised so that no upload needs 10,000+. */
  partBytes: number
  /** `If-Match` / `If-None-Match` of the completion. */
  condition: { IfMatch?: string; IfNoneMatch?: string }
  signal?: AbortSignal
}

const httpOptions = (signal?: AbortSignal) =>
  signal === undefined ? undefined : { abortSignal: signal }

/** Whether this client sends checksums by default (then multipart parts carry CRC32s). */
async function checksumsByDefault(client: S3Client): Promise<boolean> {
  const config = client.config as { requestChecksumCalculation?: () => Promise<string> }
  try {
    return (await config.requestChecksumCalculation?.()) === 'WHEN_SUPPORTED'
  } catch {
    return false
  }
}

/**
 * A multipart upload of `size` bytes whose parts come from `part`, 4 at a time; aborted on any
 * failure. Answers the ETag of the completed object.
 */
export async function multipartUpload(
  target: MultipartTarget,
  size: number,
  part: (offset: number, size: number) => Promise<Uint8Array>,
): Promise<string | undefined> {
  const { client, bucket, key, signal } = target
  const each = Math.max(target.partBytes, Math.ceil(size / MAX_PARTS))
  const count = Math.max(1, Math.ceil(size / each))
  const crc = await checksumsByDefault(client)
  const checksum = crc ? { ChecksumAlgorithm: 'CRC32' as const } : {}
  const created = await client.send(
    new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ...checksum }),
    httpOptions(signal),
  )
  const UploadId = created.UploadId
  if (UploadId === undefined)
    throw new IsoagentError('io', `S3 upload of ${key} failed: no upload id returned`, {
      data: { key },
    })
  try {
    const parts: CompletedPart[] = new Array(count)
    await mapLimit(
      Array.from({ length: count }, (_, i) => i),
      PART_CONCURRENCY,
      async (i) => {
        const offset = i * each
        const body = await part(offset, Math.min(each, size - offset))
        const out = await client.send(
          new UploadPartCommand({
            Bucket: bucket,
            Key: key,
            UploadId,
            PartNumber: i + 1,
            Body: body,
            ContentLength: body.length,
            ...checksum,
          }),
          httpOptions(signal),
        )
        parts[i] = {
          PartNumber: i + 1,
          ETag: out.ETag,
          ...(out.ChecksumCRC32 ? { ChecksumCRC32: out.ChecksumCRC32 } : {}),
        }
      },
    )
    const done = await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        UploadId,
        MultipartUpload: { Parts: parts },
        ...target.condition,
      }),
      httpOptions(signal),
    )
    return done.ETag
  } catch (error) {
    await client
      .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId }))
      .catch(() => {})
    throw error
  }
}
