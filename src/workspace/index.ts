export type { WorkspaceCapabilities } from './capabilities.ts'
export type {
  AppendOptions,
  ByteIndex,
  ByteRange,
  DirEntry,
  EntryKind,
  ListOptions,
  ListPage,
  WorkspaceDescriptor,
  WorkspaceServices,
  WorkspaceStat,
  WriteOptions,
  WriteOutcome,
  WritePrecondition,
} from './workspace-services.ts'
export type {
  FileScanJob,
  FileScanner,
  FileScanOutcome,
  ScanRecord,
  ScanResult,
  TreeListOutcome,
  TreeListRequest,
  TreeScanOutcome,
  TreeScanRequest,
} from './file-scanner.ts'
export type { BodyProgress, TempFile, TempFiles } from './temp-files.ts'
export type { Shell, ShellOutcome, ShellRequest, TreeEntry, TreeSnapshot } from './shell.ts'
export { WorkspacePath, MAX_PATH_LENGTH, MAX_SEGMENT_BYTES } from './workspace-path.ts'
export type { ParsePathOptions } from './workspace-path.ts'
export { checkPrecondition, keyedLock, pageOfNames } from './adapter-kit.ts'
export type {
  GitAddedPath,
  GitBackend,
  GitBlobSide,
  GitBranch,
  GitCheckoutTarget,
  GitCommit,
  GitDiffFile,
  GitHead,
  GitRemote,
  GitSignature,
  GitStatus,
  GitStatusEntry,
  GitTreeChange,
  GitWorktree,
} from './git-backend.ts'
