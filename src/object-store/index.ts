export type {
  ByteSource,
  ListRequest,
  ObjectBody,
  ObjectHead,
  ObjectPage,
  ObjectRange,
  ObjectStore,
  PutCondition,
  ReadObject,
} from './object-store.ts'
export { objectStoreWorkspace } from './object-store-workspace.ts'
export type { ObjectStoreWorkspaceOptions } from './object-store-workspace.ts'
export { KeySpace, normalisePrefix, MAX_KEY_BYTES } from './key-space.ts'
