import { createTwoFilesPatch } from 'diff'
import { boundedPreview } from '../text/preview.ts'

/** Largest diff kept in metadata and output, in UTF-8 bytes. */
export const DIFF_PREVIEW_BYTES = 16 * 1024

/** Unified diff of a file's change (3 lines of context), bounded to {@link DIFF_PREVIEW_BYTES}. */
export function boundedDiff(path: string, before: string, after: string) {
  const full = createTwoFilesPatch(`a/${path}`, `b/${path}`, before, after, undefined, undefined, {
    context: 3,
  })
  const trimmed = full.endsWith('\n') ? full.slice(0, -1) : full
  const body = trimmed.startsWith('===') ? trimmed.slice(trimmed.indexOf('\n') + 1) : trimmed
  const preview = boundedPreview(body, DIFF_PREVIEW_BYTES)
  return { diff: preview.text, diff_truncated: preview.truncated }
}
