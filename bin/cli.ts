import { parseArgs } from 'node:util'
import { Agent, type Session } from '../adapters/index.ts'
import { localWorkspace } from '../adapters/node-fs/index.ts'

const USAGE = `isoagent — coding-agent tools over a workspace

Usage:
  isoagent tools [--workspace DIR] [--json]
      List the tools a session over DIR offers (--json: full model-facing definitions).
  isoagent call TOOL 'JSON_ARGS' [--workspace DIR] [--json]
      Run one tool call. Prints the output; --json prints the whole result
      (output, exitCode, errorKind, metadata). Exit code: the result's exitCode.

Options:
  -w, --workspace DIR   workspace root on local disk (default: current directory)
      --json            machine-readable output
  -h, --help            this text

Exit codes: 0 success, 1 the tool call failed, 2 usage error.`

/** Run the CLI with `argv` (without node and script); returns the process exit code. */
export async function main(
  argv: string[],
  out = process.stdout,
  err = process.stderr,
): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        workspace: { type: 'string', short: 'w', default: '.' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    })
  } catch (error) {
    err.write(`isoagent: ${(error as Error).message}\n\n${USAGE}\n`)
    return 2
  }
  const { values, positionals } = parsed
  const [command, ...rest] = positionals
  if (values.help || command === undefined || command === 'help') {
    out.write(USAGE + '\n')
    return command === undefined && !values.help ? 2 : 0
  }

  let session: Session
  try {
    session = await Agent.create().session(localWorkspace(values.workspace))
  } catch (error) {
    err.write(`isoagent: ${(error as Error).message}\n`)
    return 2
  }
  try {
    if (command === 'tools') {
      if (rest.length > 0) {
        err.write(`isoagent: tools takes no arguments\n`)
        return 2
      }
      if (values.json) out.write(JSON.stringify(session.toolDefinitions(), null, 2) + '\n')
      else
        for (const def of session.toolDefinitions())
          out.write(`${def.name.padEnd(8)} ${def.description.split('. ')[0]}\n`)
      return 0
    }
    if (command === 'call') {
      const [tool, json, ...extra] = rest
      if (tool === undefined || extra.length > 0) {
        err.write(`isoagent: usage: isoagent call TOOL 'JSON_ARGS' [--workspace DIR] [--json]\n`)
        return 2
      }
      let args: unknown = {}
      if (json !== undefined) {
        try {
          args = JSON.parse(json)
        } catch (error) {
          err.write(`isoagent: arguments are not valid JSON: ${(error as Error).message}\n`)
          return 2
        }
      }
      const result = await session.tool(tool, args)
      if (values.json) {
        out.write(JSON.stringify({ ...result }, null, 2) + '\n')
      } else {
        if (result.output.length > 0)
          out.write(result.output.endsWith('\n') ? result.output : result.output + '\n')
        if (result.errorKind !== undefined) err.write(`error: ${result.errorKind.type}\n`)
      }
      return result.exitCode
    }
    err.write(`isoagent: unknown command "${command}"\n\n${USAGE}\n`)
    return 2
  } finally {
    await session.close()
  }
}
