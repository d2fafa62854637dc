import { zipSync, type Zippable } from 'fflate'
import type { ImportedFile } from './tab-client.ts'

/** Files from a picker (`webkitdirectory` gives each its folder path). */
export async function filesOfInput(list: FileList): Promise<ImportedFile[]> {
  return Promise.all(
    [...list].map(async (file) => ({
      path: clean(file.webkitRelativePath || file.name),
      bytes: new Uint8Array(await file.arrayBuffer()),
    })),
  )
}

/** Files and folders dropped on the page, folders walked through the entries API. */
export async function filesOfDrop(data: DataTransfer): Promise<ImportedFile[]> {
  const entries = [...data.items]
    .map((item) => item.webkitGetAsEntry?.())
    .filter((e): e is FileSystemEntry => e !== null && e !== undefined)
  if (entries.length === 0) return filesOfInput(data.files)
  const out: ImportedFile[] = []
  const visit = async (entry: FileSystemEntry): Promise<void> => {
    if (entry.isFile) {
      const file = await new Promise<File>((ok, fail) =>
        (entry as FileSystemFileEntry).file(ok, fail),
      )
      out.push({ path: clean(entry.fullPath), bytes: new Uint8Array(await file.arrayBuffer()) })
    } else if (entry.isDirectory) {
      const reader = (entry as FileSystemDirectoryEntry).createReader()
      for (;;) {
        const batch = await new Promise<FileSystemEntry[]>((ok, fail) =>
          reader.readEntries(ok, fail),
        )
        if (batch.length === 0) break
        for (const child of batch) await visit(child)
      }
    }
  }
  for (const entry of entries) await visit(entry)
  return out
}

const clean = (path: string) => path.replace(/^\/+/, '')

/** A zip of `files` (deflated), for the export button. */
export function zipOf(files: ImportedFile[]): Uint8Array {
  const tree: Zippable = {}
  for (const f of files) tree[f.path] = f.bytes
  return zipSync(tree, { level: 6 })
}

/** Offer `bytes` as a download named `name`. */
export function download(bytes: Uint8Array, name: string, type: string): void {
  const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type }))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}
