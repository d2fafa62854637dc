import { readFileSync } from 'node:fs'
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
  isoagent verify FILE [--workspace DIR] [--json]
      Run the checks in FILE, a JSON file {"subject": "...", "commands": [{"id", "kind",
      "command", "description"?, "required"? (default true), "timeoutMs"?}]}, one after
      another through the governed bash tool, and print a report (--json: the whole report).
      Exit code: 0 when every required check passed, 1 when one did not.
  isoagent mcp [--workspace DIR]
      Serve DIR's tools to an MCP client over stdio (for desktop MCP clients).

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
  if (argv[0] === 'mcp') return (await import('./mcp.ts')).mcpMain(argv.slice(1))
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
  // Ctrl-C or a TERM ends running commands (their whole process groups) before the CLI exits.
  const onSignal = (signal: NodeJS.Signals) => {
    void session.close().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143))
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
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
    if (command === 'verify') return await verify(session, rest, values.json, out, err)
    err.write(`isoagent: unknown command "${command}"\n\n${USAGE}\n`)
    return 2
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await session.close()
  }
}

async function verify(
  session: Session,
  rest: string[],
  json: boolean,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const [file, ...extra] = rest
  if (file === undefined || extra.length > 0) {
    err.write(`isoagent: usage: isoagent verify FILE [--workspace DIR] [--json]\n`)
    return 2
  }
  let spec: { subject?: unknown; commands?: unknown }
  try {
    spec = JSON.parse(readFileSync(file, 'utf8')) as typeof spec
  } catch (error) {
    err.write(`isoagent: cannot read ${file}: ${(error as Error).message}\n`)
    return 2
  }
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    err.write(`isoagent: ${file} must hold a JSON object {"subject", "commands"}\n`)
    return 2
  }
  let report
  try {
    report = await session.verifyCommands(spec.subject as string, spec.commands as never)
  } catch (error) {
    err.write(`isoagent: ${(error as Error).message}\n`)
    return 2
  }
  if (json) out.write(JSON.stringify(report, null, 2) + '\n')
  else {
    out.write(`${report.subject}: ${report.passed ? 'PASSED' : 'FAILED'}\n`)
    for (const r of report.results) {
      const ok = r.exitCode === 0 && !r.timedOut
      const how = r.timedOut
        ? 'timed out'
        : r.exitCode === null
          ? 'did not run'
          : `exit ${r.exitCode}`
      out.write(
        `  ${ok ? 'pass' : 'FAIL'} ${r.id} (${r.kind}${r.required ? '' : ', optional'}) ${how}, ${r.durationMs} ms\n`,
      )
      if (!ok && r.outputTail !== '')
        out.write(r.outputTail.replace(/^/gm, '      ').replace(/\s*$/, '\n'))
    }
  }
  return report.passed ? 0 : 1
}
