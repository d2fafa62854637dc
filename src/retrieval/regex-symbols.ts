const DEFINITION =
  /(?:^|[\s;{(])(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:function\*?|class|interface|type|enum|struct|trait|def|fn|func|impl|module|namespace)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)/gm

/**
 * Names a definition keyword (`function`, `class`, `interface`, `type`, `enum`, `struct`,
 * `trait`, `def`, `fn`, `func`, `impl`, `module`, `namespace`) introduces in `text`: the symbol
 * channel's fallback where no parser is available.
 */
export function regexDefinitionNames(text: string): string[] {
  return [...text.matchAll(DEFINITION)].map((m) => m[1]!)
}
