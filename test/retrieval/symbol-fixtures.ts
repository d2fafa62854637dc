// Source files in each language the tree-sitter symbol channel knows, with the definitions a
// parser must find in them (and text a keyword regex misreads: definitions named in comments,
// methods without a keyword). Shared by the Node and the workerd tests.

/** path → source. */
export const SYMBOL_SOURCES: Record<string, string> = {
  'src/app.ts': [
    '// the function ghostInComment is not defined here',
    'export function startApp(): void {}',
    'export class Engine {',
    '  spinUp(): void {}',
    '}',
    'interface Options { a: number }',
    'type Mode = "a" | "b"',
    'enum Color { Red }',
    'const arrowHelper = () => 1',
    'abstract class Base { abstract run(): void }',
  ].join('\n'),
  'src/view.tsx': 'export function Button() { return <b>hi</b> }\nclass Panel {}\n',
  'lib/util.js': 'function* gen() {}\nclass Queue { push(x) {} }\nconst fn = function () {}\n',
  'tools/job.py': 'def run_job(x):\n    pass\n\nclass Worker:\n    def work(self):\n        pass\n',
  'cmd/main.go':
    'package main\n\nfunc Serve() {}\n\ntype Server struct{}\n\nfunc (s *Server) Close() {}\n',
  'core/lib.rs':
    'pub fn parse_all() {}\nstruct Token;\nenum Kind { A }\ntrait Visit {}\ntype Alias = u8;\nmod inner {}\n',
  'app/Shop.java':
    'class Shop {\n  Shop() {}\n  public void restock() {}\n}\ninterface Store {}\nenum Size { S }\n',
}

/** What tree-sitter must find: path → `kind name@line`, in document order. */
export const SYMBOL_EXPECTED: Record<string, string[]> = {
  'src/app.ts': [
    'function startApp@2',
    'class Engine@3',
    'method spinUp@4',
    'interface Options@6',
    'type Mode@7',
    'enum Color@8',
    'function arrowHelper@9',
    'class Base@10',
    'method run@10',
  ],
  'src/view.tsx': ['function Button@1', 'class Panel@2'],
  'lib/util.js': ['function gen@1', 'class Queue@2', 'method push@2', 'function fn@3'],
  'tools/job.py': ['function run_job@1', 'class Worker@4', 'function work@5'],
  'cmd/main.go': ['function Serve@3', 'type Server@5', 'method Close@7'],
  'core/lib.rs': [
    'function parse_all@1',
    'type Token@2',
    'enum Kind@3',
    'interface Visit@4',
    'type Alias@5',
    'module inner@6',
  ],
  'app/Shop.java': [
    'class Shop@1',
    'method Shop@2',
    'method restock@3',
    'interface Store@5',
    'enum Size@6',
  ],
}
