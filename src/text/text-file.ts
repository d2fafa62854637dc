/** Line-ending style of a text. */
export type LineEnding = 'lf' | 'crlf' | 'mixed' | 'none'

/**
 * A text file split into what a model edits and what must survive byte for byte: a UTF-8 BOM
 * and CRLF line endings. `body` has no BOM and, when every line ends in CRLF, LF endings;
 * {@link TextFile.restore} puts both back.
 */
export interface TextFile {
  bom: boolean
  eol: LineEnding
  body: string
}

/** Line-ending style of `text`. */
export function detectLineEnding(text: string): LineEnding {
  let lf = 0
  let crlf = 0
  let at = text.indexOf('\n')
  while (at !== -1) {
    if (at > 0 && text.charCodeAt(at - 1) === 13) crlf++
    else lf++
    at = text.indexOf('\n', at + 1)
  }
  if (lf === 0 && crlf === 0) return 'none'
  if (crlf === 0) return 'lf'
  if (lf === 0) return 'crlf'
  return 'mixed'
}

/** Split decoded file text into BOM, line-ending style and an editable body. */
export function openTextFile(text: string): TextFile {
  const bom = text.charCodeAt(0) === 0xfeff
  const raw = bom ? text.slice(1) : text
  const eol = detectLineEnding(raw)
  return { bom, eol, body: eol === 'crlf' ? raw.replaceAll('\r\n', '\n') : raw }
}

/** The file text for an edited `body`, with the original BOM and line endings. */
export function restoreTextFile(file: TextFile, body: string): string {
  const text = file.eol === 'crlf' ? body.replace(/\r?\n/g, '\r\n') : body
  return file.bom ? '\uFEFF' + text : text
}

/** Bring model-supplied text to the body's convention (LF when the file is CRLF). */
export function toBodyConvention(file: TextFile, text: string): string {
  return file.eol === 'crlf' ? text.replaceAll('\r\n', '\n') : text
}
