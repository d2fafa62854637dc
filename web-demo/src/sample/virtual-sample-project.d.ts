/** The sample project's files and its `.git` (built by `web-demo/sample-project-plugin.ts`). */
declare module 'virtual:sample-project' {
  const files: { path: string; base64: string }[]
  export default files
}
