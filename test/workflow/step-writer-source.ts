// A workflow script the workflow tests share: each step writes `ran/<step>-<random>.txt` (so a
// step run twice shows) and returns its input doubled. Steps `s<n>` for `first` are scheduled;
// when `then` is given, the run next waits (wait_until) until `go.txt` exists and schedules those;
// it completes with every step's output in order.

/** The script's source for steps `first`, then (after `go.txt`) steps `then`. */
export function stepWriterSource(first: number[], then: number[] = []): string {
  const all = [...first, ...then]
  const gate =
    then.length === 0
      ? ''
      : `
  const gate = await ctx.tool('read', { file_path: 'go.txt' })
  if (gate.exitCode !== 0) return { type: 'wait_until', wait_id: 'go', resume_at: '2100-01-01T00:00:00Z' }
  if (missing(${JSON.stringify(then)}).length > 0) return schedule(missing(${JSON.stringify(then)}))`
  return `export default async function run(ctx, inputs) {
  if (inputs.kind === 'step') {
    const w = await ctx.tool('write', { file_path: 'ran/' + inputs.step_id + '-' + Math.random().toString(36).slice(2) + '.txt', content: 'x' })
    if (w.exitCode !== 0) throw new Error(w.output)
    return inputs.input.n * 2
  }
  const schedule = (ids) => ({ type: 'schedule_steps', steps: ids.map((n) => ({ step_id: 's' + n, step_name: 'double', input: { n } })) })
  const missing = (ids) => ids.filter((n) => !(('s' + n) in inputs.step_outputs))
  if (missing(${JSON.stringify(first)}).length > 0) return schedule(missing(${JSON.stringify(first)}))${gate}
  return { type: 'complete', output: ${JSON.stringify(all)}.map((n) => inputs.step_outputs['s' + n]) }
}`
}
