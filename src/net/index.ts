export { safeFetch, typedFetchError, MAX_REDIRECTS, CREDENTIAL_HEADERS } from './safe-fetch.ts'
export type { SafeFetchInit, SafeFetchResult } from './safe-fetch.ts'
export type {
  AddressCheck,
  HttpTransport,
  HttpTransportRequest,
  NetContext,
} from './http-transport.ts'
export { webHttpTransport, setDefaultHttpTransport, defaultHttpTransport } from './web-transport.ts'
export { checkNetOptions, DEFAULT_USER_AGENT } from './net-options.ts'
export type { NetOptions, NetResolver } from './net-options.ts'
export { blockedAddress, blockedRange, canonicalAddress, parseAddress } from './address-policy.ts'
export type { BlockedRange } from './address-policy.ts'
export { checkResolvedAddresses } from './resolved-addresses.ts'
export {
  blockedError,
  checkHostLiteral,
  checkUrl,
  hostAllowed,
  hostNameAllowed,
  redactUrl,
  urlHost,
  MAX_URL_LENGTH,
} from './url-rules.ts'
export {
  httpStatusError,
  parseRetryAfter,
  readCapped,
  withDeadline,
  MAX_RETRY_AFTER_MS,
} from './http-failure.ts'
