/**
 * Immutable, content-addressed blobs of full tool outputs: `a3s://tool-output/<tool>/<sha256>`.
 * A URI always names the same bytes; storing it again is a no-op.
 */
export interface ArtifactStore {
  put(uri: string, bytes: Uint8Array): Promise<void>
  get(uri: string): Promise<Uint8Array | undefined>
}

/** Default cap of {@link memoryArtifactStore}: 64 MiB. */
export const DEFAULT_ARTIFACT_STORE_BYTES = 64 * 1024 * 1024

/**
 * An {@link ArtifactStore} in memory, capped at `maxBytes`. When a new artifact would exceed the
 * cap, the least recently stored or read artifacts are evicted first; an artifact larger than the
 * whole cap is not kept (`get` then returns undefined).
 */
export function memoryArtifactStore(maxBytes = DEFAULT_ARTIFACT_STORE_BYTES): ArtifactStore & {
  readonly bytes: number
  readonly evicted: number
} {
  const blobs = new Map<string, Uint8Array>()
  let total = 0
  let evicted = 0
  return {
    get bytes() {
      return total
    },
    get evicted() {
      return evicted
    },
    async put(uri, bytes) {
      const existing = blobs.get(uri)
      if (existing !== undefined) {
        blobs.delete(uri)
        blobs.set(uri, existing)
        return
      }
      if (bytes.length > maxBytes) return
      while (total + bytes.length > maxBytes) {
        const oldest = blobs.keys().next().value as string
        total -= blobs.get(oldest)!.length
        blobs.delete(oldest)
        evicted++
      }
      blobs.set(uri, bytes.slice())
      total += bytes.length
    },
    async get(uri) {
      const blob = blobs.get(uri)
      if (blob === undefined) return undefined
      blobs.delete(uri)
      blobs.set(uri, blob)
      return blob.slice()
    },
  }
}
