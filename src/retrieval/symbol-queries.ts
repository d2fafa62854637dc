/** The tree-sitter grammars the symbol channel knows (`@vscode/tree-sitter-wasm` file names). */
export const TREE_SITTER_GRAMMARS = [
  'typescript',
  'tsx',
  'javascript',
  'python',
  'go',
  'rust',
  'java',
] as const
export type TreeSitterGrammar = (typeof TREE_SITTER_GRAMMARS)[number]

const EXTENSIONS: Record<string, TreeSitterGrammar> = {
  ts: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  tsx: 'tsx',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  py: 'python',
  pyi: 'python',
  go: 'go',
  rs: 'rust',
  java: 'java',
}

/** The grammar of a path by its extension, if any. */
export function grammarOf(path: string): TreeSitterGrammar | undefined {
  const dot = path.lastIndexOf('.')
  if (dot === -1 || dot < path.lastIndexOf('/')) return undefined
  return EXTENSIONS[path.slice(dot + 1).toLowerCase()]
}

// Each pattern captures the defined name as `@<kind>`.
const JS = `
(function_declaration name: (identifier) @function)
(generator_function_declaration name: (identifier) @function)
(class_declaration name: (_) @class)
(method_definition name: (_) @method)
(variable_declarator name: (identifier) @function value: [(arrow_function) (function_expression)])
`
const TS = `${JS}
(abstract_class_declaration name: (type_identifier) @class)
(interface_declaration name: (type_identifier) @interface)
(type_alias_declaration name: (type_identifier) @type)
(enum_declaration name: (identifier) @enum)
(function_signature name: (identifier) @function)
(abstract_method_signature name: (_) @method)
(internal_module name: (identifier) @module)
`

/** Definition queries per grammar: functions, classes, methods, types, interfaces. */
export const SYMBOL_QUERIES: Record<TreeSitterGrammar, string> = {
  javascript: JS,
  typescript: TS,
  tsx: TS,
  python: `
(function_definition name: (identifier) @function)
(class_definition name: (identifier) @class)
`,
  go: `
(function_declaration name: (identifier) @function)
(method_declaration name: (field_identifier) @method)
(type_spec name: (type_identifier) @type)
`,
  rust: `
(function_item name: (identifier) @function)
(function_signature_item name: (identifier) @function)
(struct_item name: (type_identifier) @type)
(enum_item name: (type_identifier) @enum)
(union_item name: (type_identifier) @type)
(trait_item name: (type_identifier) @interface)
(type_item name: (type_identifier) @type)
(mod_item name: (identifier) @module)
(macro_definition name: (identifier) @function)
`,
  java: `
(class_declaration name: (identifier) @class)
(interface_declaration name: (identifier) @interface)
(enum_declaration name: (identifier) @enum)
(record_declaration name: (identifier) @class)
(annotation_type_declaration name: (identifier) @interface)
(method_declaration name: (identifier) @method)
(constructor_declaration name: (identifier) @method)
`,
}
