import { IsoagentError } from '../../errors.ts'
import type { ToolContext } from '../../kernel/tool-spec.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { DownloadArgs } from './download-args.ts'
import { dispositionName, sanitizeFileName, urlName } from './file-name.ts'

/** Where a download goes: the workspace path and how it is shown. */
export interface Target {
  path: WorkspacePath
  display: string
}

/** Whether `filePath` names a folder the file goes into (ends in a slash, or is `.`). */
export function namesFolder(filePath: string): boolean {
  return /[/\\]$/.test(filePath) || filePath === '.'
}

/** The target `filePath` names; a folder gets the file name `inferred` gives. */
export async function resolveTarget(
  context: ToolContext,
  filePath: string,
  inferred: () => string,
): Promise<Target> {
  const intoDir = namesFolder(filePath)
  const base = context.path(intoDir ? filePath.replace(/[/\\]+$/, '') || '.' : filePath)
  const path = intoDir
    ? context.path(
        WorkspacePath.display(base) === '.'
          ? inferred()
          : `${WorkspacePath.display(base)}/${inferred()}`,
      )
    : base
  if (path === '')
    throw new IsoagentError('is_directory', 'the workspace root is a directory, not a file')
  return { path, display: WorkspacePath.display(path) }
}

/**
 * The target of a download into a folder, named by the server (`Content-Disposition`) or the
 * URL, and authorized again now that the name is known: permission rules on the final path
 * (`deny: ['download(**\/*.sh)']`) decide before any byte is written.
 */
export async function namedTarget(
  context: ToolContext,
  args: DownloadArgs,
  response: Response,
  url: URL,
): Promise<Target> {
  const name = sanitizeFileName(
    dispositionName(response.headers.get('content-disposition')) ?? urlName(url),
  )
  const target = await resolveTarget(context, args.file_path, () => name)
  await context.authorize({ ...args, file_path: target.display })
  return target
}

/**
 * Fail when the target is a directory, or exists and `overwrite` is false; returns whether it
 * exists.
 */
export async function checkTarget(
  context: ToolContext,
  path: WorkspacePath,
  display: string,
  overwrite: boolean,
): Promise<boolean> {
  const stat = await context.workspace.stat(path)
  if (stat?.kind === 'directory')
    throw new IsoagentError(
      'is_directory',
      `${display} is a directory; name a file to download to`,
      {
        data: { path: display },
      },
    )
  if (stat !== undefined && !overwrite)
    throw new IsoagentError(
      'already_exists',
      `${display} exists; pass overwrite: true to replace it`,
      {
        data: { path: display },
      },
    )
  return stat !== undefined
}
