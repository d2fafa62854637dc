import { isExcludedDir } from '../../retrieval/eligibility.ts'
import type { FileLister } from '../../retrieval/workspace-retrieval.ts'
import { WorkspacePath } from '../../workspace/workspace-path.ts'
import type { WorkspaceServices } from '../../workspace/workspace-services.ts'
import { walkFiles, type WalkSkips } from './walk/walk.ts'

/**
 * The files retrieval indexes: the search walk (ripgrep's defaults: ignore files respected,
 * hidden and `.git` skipped) that never enters an excluded directory (`node_modules`, `dist`,
 * `.ssh`, ...).
 */
export function workspaceFileLister(workspace: WorkspaceServices): FileLister {
  return async function* (signal) {
    const skips: WalkSkips = { unreadable_dirs: 0, unreadable_ignore_files: 0 }
    for await (const item of walkFiles(workspace, {
      start: WorkspacePath.root,
      signal,
      skips,
      enter: (dir) => !isExcludedDir(WorkspacePath.basename(dir as WorkspacePath)),
    })) {
      if (typeof item === 'string') yield item
    }
  }
}
