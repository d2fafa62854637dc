import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { Agent, type Session, type ToolDefinition } from '../adapters/index.ts'
import { localWorkspace } from '../adapters/node/index.ts'

const USAGE = `isoagent — coding-agent tools over a workspace

Usage:
  isoagent tools [--workspace DIR] [--json]
      List the tools a session over DIR offers, each with its arguments (--json: the full
      model-facing definitions: descriptions and JSON Schemas).
  isoagent call TOOL 'JSON_ARGS' [--workspace DIR] [--json]
      Run one tool call. Prints the output; --json prints the whole result
      (output, exitCode, errorKind, metadata). Exit code: the result's exitCode.
  isoagent verify FILE [--workspace DIR] [--json]
      Run the checks in FILE, a JSON file {"subject": "...", "commands": [{"id", "kind",
      "command", "description"?, "required"? (default true), "timeoutMs"?}]}, one after
      another through the governed bash tool, and print a report (--json: the whole report).
      Exit code: 0 when every required check passed, 1 when one did not.
  isoagent serve [--workspace DIR | s3://bucket/prefix | memory] [--port 8787] [--host H] [--token T]
      Serve the HTTP API (see isoagent serve --help).
  isoagent mcp [--workspace DIR] [--mcp-config FILE]
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
  if (argv[0] === 'serve') return (await import('./serve.ts')).serveCommand(argv.slice(1), out, err)
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
      else out.write(toolList(session.toolDefinitions()))
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
      const known = session.toolDefinitions().map((d) => d.name)
      if (!known.includes(tool)) {
        err.write(`isoagent: unknown tool "${tool}"; this workspace offers: ${known.join(', ')}\n`)
        return 2
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

/** The first sentence of a description. */
function firstSentence(text: string): string {
  return /^[\s\S]*?[.!?](?=\s|$)/.exec(text)?.[0] ?? text
}

type Schema = { [key: string]: unknown }

/** A compact type of a JSON Schema: `string`, `integer 1..1000`, `grep|glob`, `{path*, offset}[]`. */
function typeOf(schema: Schema): string {
  if (Array.isArray(schema['enum'])) return schema['enum'].join('|')
  const type = typeof schema['type'] === 'string' ? schema['type'] : 'any'
  const range = (min: string, max: string, unit = '') => {
    const lo = schema[min]
    const hi = schema[max]
    if (hi === undefined) return lo === undefined ? '' : ` ≥${String(lo)}${unit}`
    return lo === undefined ? ` ≤${String(hi)}${unit}` : ` ${String(lo)}..${String(hi)}${unit}`
  }
  if (type === 'integer' || type === 'number') return type + range('minimum', 'maximum')
  if (type === 'string') {
    const nonEmpty = schema['minLength'] === 1
    return (
      (nonEmpty ? 'non-empty ' : '') +
      type +
      range(nonEmpty ? '' : 'minLength', 'maxLength', ' chars')
    )
  }
  if (type === 'array') {
    const items = (schema['items'] ?? {}) as Schema
    const props = items['properties'] as Schema | undefined
    const required = (items['required'] ?? []) as string[]
    const of =
      props !== undefined
        ? `{${Object.keys(props)
            .map((k) => k + (required.includes(k) ? '*' : ''))
            .join(', ')}}`
        : typeOf(items)
    return `${of}[]${range('minItems', 'maxItems', ' items')}`
  }
  return type
}

/**
 * `isoagent tools`: each tool's name and first sentence, then one line per argument (`*`
 * required): its type (enum values, ranges) and its description, which states the default.
 */
function toolList(defs: readonly ToolDefinition[]): string {
  const lines: string[] = []
  for (const def of defs) {
    lines.push(`${def.name} — ${firstSentence(def.description)}`)
    const params = def.parameters as Schema
    const props = (params['properties'] ?? {}) as Record<string, Schema>
    const required = (params['required'] ?? []) as string[]
    const rows = Object.entries(props).map(([name, schema]) => [
      name + (required.includes(name) ? '*' : ''),
      typeOf(schema),
      typeof schema['description'] === 'string' ? schema['description'] : '',
    ])
    const w0 = Math.max(...rows.map((r) => r[0]!.length))
    // Long enums do not push every description of the tool to the right.
    const w1 = Math.min(24, Math.max(...rows.map((r) => r[1]!.length)))
    for (const [name, type, text] of rows)
      lines.push(`    ${name!.padEnd(w0)}  ${type!.padEnd(w1)}  ${text}`.trimEnd())
  }
  lines.push(
    '',
    '* required. Full descriptions and JSON Schemas: isoagent tools --json',
    `Call one: isoagent call TOOL 'JSON_ARGS' (e.g. isoagent call read '{"file_path":"README.md"}')`,
  )
  return lines.join('\n') + '\n'
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
