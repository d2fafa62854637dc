/**
 * Read-only files beside the workspace, named by a URI scheme (`skill://<name>/<file>` for host
 * skills' bundled files): what `read` opens for a path that starts with a mounted scheme. A
 * session mounts one with `Kernel.mount`; tools see the session's mounts on their
 * `ToolContext.mounts`. Nothing can be written, listed or searched through a mount.
 */
export interface ReadOnlyMount {
  /**
   * The bytes of `uri` (in this mount's scheme), capped by the mount; every refusal is a typed
   * `IsoagentError` (`invalid_path`, `path_escape`, `not_found`, `is_directory`, `too_large`).
   */
  read(uri: string): Promise<Uint8Array>
}

/** The scheme part of `path` with its `://` (`skill://`), or `undefined` when it has none. */
export function uriSchemeOf(path: string): string | undefined {
  const match = /^[a-z][a-z0-9+.-]*:\/\//.exec(path)
  return match?.[0]
}
