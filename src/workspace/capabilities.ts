/**
 * What a workspace can really serve. The session registers tools from these flags: a missing
 * capability is a missing tool, never a tool that fails at run time.
 */
export interface WorkspaceCapabilities {
  /** Files can be read and directories listed (`read`, `ls`). */
  read: boolean
  /** Files can be created, replaced and removed (`write`; with `read` also `edit`, `patch`). */
  write: boolean
  /** Commands can be run through a {@link WorkspaceServices.shell} (`bash`). */
  exec: boolean
  /** A git repository can be served (`git`). */
  git: boolean
  /** Tree walks and search are served (`search`). */
  search: boolean
  /** Absolute directory on a local disk, when the workspace is one (enables `download`). */
  localRoot?: string
  /** Replacing a file is atomic (temp file + rename, or the store's own atomic put). */
  atomicRename: boolean
  /** Writes honour {@link WritePrecondition}s atomically on the backend. */
  conditionalWrite: boolean
  /** The backend has symbolic links (and containment checks them at open time). */
  symlinks: boolean
}
