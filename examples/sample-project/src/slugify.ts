/** Options of {@link slugify}. */
export interface SlugifyOptions {
  /** What joins the words (default `-`). */
  separator?: string
  /** Longest slug, cut at a word boundary (default 64). */
  maxLength?: number
}

/** `"Hello, World!"` → `"hello-world"`: lower case, accents dropped, words joined. */
export function slugify(title: string, options: SlugifyOptions = {}): string {
  const separator = options.separator ?? '-'
  const maxLength = options.maxLength ?? 64
  const words = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '')
  let slug = ''
  for (const word of words) {
    const next = slug === '' ? word : slug + separator + word
    if (next.length > maxLength) break
    slug = next
  }
  return slug
}
