import { IsoagentError } from '../errors.ts'
import { decodeTextFile, sha256Hex } from '../text/bytes.ts'
import { bytesPreview } from '../text/preview.ts'
import type { WorkspacePath } from '../workspace/workspace-path.ts'
import type { WorkspaceStat } from '../workspace/workspace-services.ts'
import type { ToolContext } from '../kernel/tool-spec.ts'

/** Largest file the text-editing tools (edit, patch, append) load whole. */
export const MAX_EDIT_FILE_BYTES = 64 * 1024 * 1024
/** Bytes of content shown in before/after previews. */
export const PREVIEW_BYTES = 1024

/** A text file loaded whole, with the version it was read at. */
export interface LoadedText {
  path: WorkspacePath
  stat: WorkspaceStat
  bytes: Uint8Array
  text: string
}

/** Stat `path` and refuse directories; `undefined` when absent. */
export async function statFile(context: ToolContext, path: WorkspacePath, input: string) {
  const stat = await context.workspace.stat(path)
  if (stat?.kind === 'directory') {
    throw new IsoagentError('is_directory', `${input} is a directory, not a file`, {
      data: { path: input },
    })
  }
  return stat
}

/** Load a whole UTF-8 text file (binary, invalid UTF-8 and oversized files refused). */
export async function loadText(
  context: ToolContext,
  path: WorkspacePath,
  input: string,
): Promise<LoadedText> {
  const stat = await statFile(context, path, input)
  if (stat === undefined)
    throw new IsoagentError('not_found', `file not found: ${input}`, { data: { path: input } })
  if (stat.size > MAX_EDIT_FILE_BYTES) {
    throw new IsoagentError(
      'too_large',
      `${input} is ${stat.size} bytes; text tools edit files up to ${MAX_EDIT_FILE_BYTES} bytes`,
      {
        data: { path: input, bytes: stat.size, max_bytes: MAX_EDIT_FILE_BYTES },
      },
    )
  }
  const bytes = await context.workspace.read(path)
  return { path, stat, bytes, text: decodeTextFile(bytes, input) }
}

/** `before`/`after` metadata of a file state: size, sha256 and a bounded preview. */
export async function fileSummary(bytes: Uint8Array) {
  const preview = bytesPreview(bytes, PREVIEW_BYTES)
  return {
    bytes: bytes.length,
    sha256: await sha256Hex(bytes),
    preview: preview.text,
    preview_truncated: preview.truncated,
  }
}
