import { IsoagentError } from '../errors.ts'
import type { WorkspaceServices } from '../workspace/workspace-services.ts'
import { WorkspacePath } from '../workspace/workspace-path.ts'
import { SKILL_LIMITS } from './skill.ts'
import type { SkillRegistry } from './skill-registry.ts'

/**
 * The scheme of a skill's bundled files as the `Skill` tool names them for skills whose folder is
 * not in the workspace (host skills): `skill://<name>/<path in the skill's folder>`, each segment
 * URI-encoded (the form the MCP server's `skill://` resources use). The `read` tool opens them
 * read-only.
 */
export const SKILL_FILE_SCHEME = 'skill://'

/** `skill://<name>/<relative>` for a file at `relative` (`/`-separated) in skill `name`'s folder. */
export function skillFileUri(name: string, relative: string): string {
  return SKILL_FILE_SCHEME + name + '/' + relative.split('/').map(encodeURIComponent).join('/')
}

/** Whether `input` names a skill file (`skill://…`) rather than a workspace path. */
export function isSkillFileUri(input: string): boolean {
  return input.startsWith(SKILL_FILE_SCHEME)
}

/**
 * Split `skill://<name>/<relative>` into the skill's name and the decoded relative path. Throws
 * `invalid_path` for a malformed URI and `path_escape` for a relative path with an empty, `.` or
 * `..` segment (nothing outside the skill's folder is ever named).
 */
export function parseSkillFileUri(uri: string): { name: string; relative: string } {
  const rest = uri.slice(SKILL_FILE_SCHEME.length)
  const slash = rest.indexOf('/')
  if (!isSkillFileUri(uri) || slash <= 0 || slash === rest.length - 1)
    throw new IsoagentError(
      'invalid_path',
      `not a skill file path: ${uri} (skill://<name>/<file>)`,
      {
        data: { path: uri },
      },
    )
  let segments: string[]
  try {
    segments = rest
      .slice(slash + 1)
      .split('/')
      .map((s) => decodeURIComponent(s))
  } catch {
    throw new IsoagentError('invalid_path', `not a skill file path (bad %-escape): ${uri}`, {
      data: { path: uri },
    })
  }
  if (
    segments.some((s) => s === '' || s === '.' || s === '..' || s.includes('/') || s.includes('\0'))
  )
    throw new IsoagentError('path_escape', `${uri} leaves the skill's folder`, {
      data: { path: uri },
    })
  return { name: rest.slice(0, slash), relative: segments.join('/') }
}

/** `op` on a skill's folder; its `path_escape` (which says "workspace") named for the folder. */
async function inFolder<T>(op: () => Promise<T>, label: string): Promise<T> {
  try {
    // Awaited inside the try: a workspace may also throw before it returns a promise.
    return await op()
  } catch (error) {
    if (!IsoagentError.is(error, 'path_escape')) throw error
    throw new IsoagentError('path_escape', `${label} leaves the skill's folder (a symlink)`, {
      data: { path: label },
      cause: error,
    })
  }
}

/**
 * At most `maxBytes` of the file `relative` of `folder` (a workspace rooted at a skill's folder:
 * it refuses paths and symlinks that leave it with `path_escape`). Throws `not_found`,
 * `is_directory`, or `too_large` when the file is bigger than `maxBytes`.
 */
export async function readFolderFile(
  folder: WorkspaceServices,
  relative: string,
  maxBytes: number,
  label: string,
): Promise<Uint8Array> {
  const root = folder.capabilities.localRoot ?? '/'
  const path = WorkspacePath.parse(relative, { root })
  const stat = await inFolder(() => folder.stat(path), label)
  if (stat === undefined)
    throw new IsoagentError('not_found', `file not found: ${label}`, { data: { path: label } })
  if (stat.kind === 'directory')
    throw new IsoagentError('is_directory', `${label} is a directory`, { data: { path: label } })
  const tooLarge = () =>
    new IsoagentError('too_large', `${label} is larger than ${maxBytes} bytes`, {
      data: { path: label, max_bytes: maxBytes },
    })
  if (stat.size > maxBytes) throw tooLarge()
  const bytes = await inFolder(() => folder.read(path, { offset: 0, length: maxBytes + 1 }), label)
  if (bytes.length > maxBytes) throw tooLarge()
  return bytes
}

/**
 * The bytes of the skill file `uri` (`skill://<name>/<file>`) of `registry`'s skills, at most
 * {@link SKILL_LIMITS.maxBundledFileBytes}. Only skills that can read their folder (host skills)
 * serve files; every refusal is a typed `IsoagentError` (`invalid_path`, `path_escape`,
 * `not_found`, `is_directory`, `too_large`).
 */
export async function readSkillFile(registry: SkillRegistry, uri: string): Promise<Uint8Array> {
  const { name, relative } = parseSkillFileUri(uri)
  const entry = registry.get(name)
  if (entry === undefined)
    throw new IsoagentError('not_found', `Skill '${name}' not found (${uri})`, {
      data: { path: uri },
    })
  if (entry.readFile === undefined)
    throw new IsoagentError(
      'not_found',
      `Skill '${name}' has no files under skill:// (a workspace skill's files are read by their workspace paths, as Skill lists them)`,
      { data: { path: uri } },
    )
  return entry.readFile(relative, SKILL_LIMITS.maxBundledFileBytes)
}
