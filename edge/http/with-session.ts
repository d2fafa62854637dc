import type { Context } from 'hono'
import type { HostedSession } from './hosted-session.ts'
import type { AppContext } from './route-spec.ts'

/** Run `fn` with the session of `:id`, counting the request as use of the session. */
export function withSession(
  ctx: AppContext,
  fn: (c: Context, hosted: HostedSession) => Response | Promise<Response>,
): (c: Context) => Promise<Response> {
  return async (c) => {
    const hosted = ctx.session(c)
    hosted.enter()
    try {
      return await fn(c, hosted)
    } finally {
      hosted.leave()
    }
  }
}
