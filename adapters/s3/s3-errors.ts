import { IsoagentError, WorkspacePath } from '../../src/index.ts'

/** What a request was for, to say so in a failure. */
export interface S3ErrorContext {
  op: string
  bucket: string
  /** Workspace path concerned (omitted for whole-bucket operations). */
  path?: string
}

interface SdkErrorShape {
  name?: unknown
  Code?: unknown
  code?: unknown
  message?: unknown
  $metadata?: { httpStatusCode?: number }
  $response?: { statusCode?: number; headers?: Record<string, string | undefined> }
  $retryable?: { throttling?: boolean }
}

const shape = (error: unknown): SdkErrorShape =>
  typeof error === 'object' && error !== null ? (error as SdkErrorShape) : {}

/** The HTTP status of a failed S3 request, when the server answered. */
export function statusOf(error: unknown): number | undefined {
  const e = shape(error)
  return e.$metadata?.httpStatusCode ?? e.$response?.statusCode
}

/** The S3 error code (`NoSuchKey`, `SlowDown`, …) or, for errors without a body, the SDK name. */
export function codeOf(error: unknown): string {
  const e = shape(error)
  if (typeof e.Code === 'string' && e.Code !== '') return e.Code
  if (typeof e.name === 'string' && !GENERIC_NAMES.has(e.name)) return e.name
  if (typeof e.code === 'string' && e.code !== '') return e.code
  const status = statusOf(error)
  return (status !== undefined && STATUS_NAMES[status]) || 'UnknownError'
}

// Names the SDK gives errors without an S3 code (bodyless HEAD answers), and what to say instead.
const GENERIC_NAMES = new Set(['', 'Error', 'Unknown', 'UnknownError', 'S3ServiceException'])
const STATUS_NAMES: Record<number, string> = {
  400: 'BadRequest',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  412: 'PreconditionFailed',
  416: 'InvalidRange',
  429: 'TooManyRequests',
  500: 'InternalError',
  501: 'NotImplemented',
  503: 'ServiceUnavailable',
}

/** The object (not the bucket) is absent: `NoSuchKey`, or a bodyless 404 of HEAD. */
export function isMissingKey(error: unknown): boolean {
  const code = codeOf(error)
  if (code === 'NoSuchBucket') return false
  return code === 'NoSuchKey' || code === 'NotFound' || statusOf(error) === 404
}

/** The store refused a conditional write (`412 PreconditionFailed`, `409 ConditionalRequestConflict`). */
export function isPreconditionFailure(error: unknown): boolean {
  const code = codeOf(error)
  const status = statusOf(error)
  return (
    code === 'PreconditionFailed' ||
    code === 'ConditionalRequestConflict' ||
    status === 412 ||
    (status === 409 && code !== 'BucketAlreadyExists' && code !== 'OperationAborted')
  )
}

/** The range asked for starts past the end of the object. */
export function isUnsatisfiableRange(error: unknown): boolean {
  return codeOf(error) === 'InvalidRange' || statusOf(error) === 416
}

const DENIED = new Set([
  'AccessDenied',
  'Forbidden',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'AllAccessDisabled',
  'ExpiredToken',
  'InvalidToken',
  'TokenRefreshRequired',
  'AccountProblem',
  'InvalidSecurity',
  'CredentialsProviderError',
])

const THROTTLED = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequests',
  'TooManyRequestsException',
  'ServiceUnavailable',
])

const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_STREAM_PREMATURE_CLOSE',
  'UND_ERR_SOCKET',
  'TimeoutError',
  'RequestTimeout',
  'NetworkingError',
])

/** Milliseconds a `Retry-After` header asks to wait (seconds or an HTTP date), or null. */
export function retryAfterMs(error: unknown): number | null {
  const headers = shape(error).$response?.headers ?? {}
  const value = headers['retry-after'] ?? headers['Retry-After']
  if (value === undefined || value.trim() === '') return null
  const seconds = Number(value)
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now())
}

function networkCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 4; depth++) {
    const s = shape(e)
    for (const candidate of [s.code, s.name]) {
      if (typeof candidate === 'string' && NETWORK.has(candidate)) return candidate
    }
    if (typeof s.message === 'string' && /^(aborted|socket hang up|terminated)$/i.test(s.message))
      return 'ECONNRESET'
    e = (e as { cause?: unknown }).cause
  }
  return undefined
}

/**
 * A short, human {@link IsoagentError} for a failed S3 request: never the SDK's stack or XML.
 * `NoSuchBucket` and missing keys → `not_found`; credentials and policy refusals →
 * `permission_denied`; throttling → `io` with `retryable` and `retry_after_ms`; connection
 * failures → `io` with the operation; aborted requests → `cancelled`; anything else → `io` with
 * the S3 code and HTTP status.
 */
export function s3Error(error: unknown, context: S3ErrorContext): IsoagentError {
  if (error instanceof IsoagentError) return error
  if (error instanceof PartialDeleteError) return partialDelete(error, context)
  const { op, bucket, path } = context
  const shown =
    path === undefined ? `bucket ${bucket}` : WorkspacePath.display(path as WorkspacePath)
  const code = codeOf(error)
  const status = statusOf(error)
  const base = { op, bucket, ...(path === undefined ? {} : { path }), s3_code: code }
  const data = status === undefined ? base : { ...base, http_status: status }

  if (code === 'AbortError' || shape(error).name === 'AbortError')
    return new IsoagentError('cancelled', `${op} of ${shown} cancelled`, { data, cause: error })
  if (code === 'NoSuchBucket')
    return new IsoagentError(
      'not_found',
      `S3 bucket "${bucket}" does not exist (or is not visible with these credentials)`,
      { data: { op, bucket, s3_code: code }, cause: error },
    )
  if (code === 'NoSuchKey' || (status === 404 && code === 'NotFound'))
    return new IsoagentError('not_found', `not found: ${shown}`, { data, cause: error })
  if (DENIED.has(code) || status === 403)
    return new IsoagentError(
      'permission_denied',
      `S3 refused ${op} of ${shown} (${code}): check the credentials and the bucket policy`,
      { data, cause: error },
    )
  if (
    THROTTLED.has(code) ||
    status === 503 ||
    status === 429 ||
    shape(error).$retryable?.throttling
  ) {
    const wait = retryAfterMs(error)
    return new IsoagentError(
      'io',
      `S3 is throttling requests (${code}) during ${op} of ${shown}; retry ${wait === null ? 'later' : `in ${Math.ceil(wait / 1000)} s`}`,
      { data: { ...data, retryable: true, retry_after_ms: wait }, cause: error },
    )
  }
  if (code === 'NotImplemented' || status === 501)
    return new IsoagentError('unsupported', `this S3 store does not support ${op} (${code})`, {
      data,
      cause: error,
    })
  if (status === undefined) {
    const network = networkCode(error)
    if (network !== undefined)
      return new IsoagentError(
        'io',
        `S3 ${op} of ${shown} failed: network error (${network}); the endpoint could not be reached or closed the connection`,
        { data: { ...data, network_error: network, retryable: true }, cause: error },
      )
    return new IsoagentError('io', `S3 ${op} of ${shown} failed (${code})`, {
      data,
      cause: error,
    })
  }
  return new IsoagentError('io', `S3 ${op} of ${shown} failed: ${code} (HTTP ${status})`, {
    data: { ...data, retryable: status >= 500 },
    cause: error,
  })
}

/** `DeleteObjects` answered, but with errors for some keys: {@link s3Error} says which. */
export class PartialDeleteError extends Error {
  constructor(
    readonly failed: number,
    readonly asked: number,
    readonly code: string | undefined,
  ) {
    super(`could not delete ${failed} of ${asked} objects (${code ?? 'error'})`)
  }
}

/** The typed error of a partly failed `DeleteObjects` under `path`. */
function partialDelete(error: PartialDeleteError, context: S3ErrorContext): IsoagentError {
  const { op, bucket, path = '' } = context
  return new IsoagentError(
    error.code === 'AccessDenied' ? 'permission_denied' : 'io',
    `S3 could not delete ${error.failed} of ${error.asked} objects under ${WorkspacePath.display(path as WorkspacePath)} (${error.code ?? 'error'})`,
    { data: { op, bucket, path, failed: error.failed, s3_code: error.code } },
  )
}
