/** Largest file embedded (bytes). */
export const MAX_ELIGIBLE_FILE_BYTES = 512 * 1024

const EXCLUDED_DIRS = new Set([
  '.git',
  '.a3s',
  '.ssh',
  '.aws',
  '.azure',
  '.claude',
  '.codex',
  '.docker',
  '.gnupg',
  '.kube',
  'node_modules',
  'target',
  '.next',
  'dist',
  'build',
  'coverage',
])
const EXCLUDED_EXTENSIONS = new Set(['pem', 'key', 'ppk', 'p12', 'pfx', 'jks', 'keystore'])
const EXCLUDED_NAMES = new Set([
  '.netrc',
  '.npmrc',
  '.pypirc',
  'auth.json',
  'service-account.json',
  'id_rsa',
  'id_dsa',
  'id_ecdsa',
  'id_ed25519',
])
const EXCLUDED_PREFIXES = ['.env', 'credentials', 'secrets']

/** Whether a directory name is never entered (`.git`, `node_modules`, `.ssh`, ...). */
export function isExcludedDir(name: string): boolean {
  return EXCLUDED_DIRS.has(name)
}

/** Whether a file name may hold a secret: never read for embedding (`*.example`/`*.sample` may). */
export function isSecretName(name: string): boolean {
  const lower = name.toLowerCase()
  if (lower.endsWith('.example') || lower.endsWith('.sample')) return false
  if (EXCLUDED_NAMES.has(lower)) return true
  if (EXCLUDED_PREFIXES.some((p) => lower.startsWith(p))) return true
  const dot = lower.lastIndexOf('.')
  return dot > 0 && EXCLUDED_EXTENSIONS.has(lower.slice(dot + 1))
}

/**
 * Whether a workspace path (`/a/b.ts`) may be embedded by its name alone: no excluded directory
 * on the way, no secret-looking name. Size and binary content are checked when read.
 */
export function isEligiblePath(path: string): boolean {
  const parts = path.split('/').filter((p) => p !== '')
  const name = parts.pop()
  if (name === undefined) return false
  if (parts.some(isExcludedDir)) return false
  return !isSecretName(name)
}
