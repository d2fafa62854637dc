import type { Context, Hono } from 'hono'
import { ApiError, errorResponse } from './api-error.ts'
import { presentedToken, tokenChecker } from './auth.ts'
import { limitBody } from './body-limit.ts'
import { hostGuard } from './host-guard.ts'
import type { RouteSpec } from './route-spec.ts'

/** How {@link mountRoutes} guards the routes it mounts. */
export interface RouteGuards {
  /** Bearer token of every route but those with `auth: false`; none: no authentication. */
  token: string | undefined
  /** Largest request body in bytes (larger: 413). */
  maxBodyBytes: number
  /** Static files for `GET`/`HEAD` requests no route answers. */
  assets: ((request: Request) => Response | undefined | Promise<Response | undefined>) | undefined
  allowedHosts: readonly string[] | undefined
  trustHost: boolean | undefined
}

/** The port a request came in on, when the server says (`serve` passes Node's socket). */
function localPortOf(c: Context): number | undefined {
  const env = c.env as { incoming?: { socket?: { localPort?: unknown } } } | undefined
  const port = env?.incoming?.socket?.localPort
  return typeof port === 'number' ? port : undefined
}

const pathPattern = (path: string) =>
  new RegExp('^' + path.replace(/:[A-Za-z_][A-Za-z0-9_]*/g, '[^/]+') + '/?$')

/** Whether a request carries the token (always, without one), and the 401 when it does not. */
function bearerAuth(token: string | undefined) {
  const checkToken = token === undefined ? undefined : tokenChecker(token)
  return {
    authorized: (c: Context) =>
      checkToken === undefined || checkToken(presentedToken(c.req.raw, c.req.url)),
    unauthorized: () =>
      errorResponse(401, 'unauthorized', 'a valid bearer token is required', {
        'www-authenticate': 'Bearer',
      }),
  }
}

/**
 * Mount `routes` on `app` behind the Host/Origin check (before everything, assets and 404
 * included), the bearer token and the body limit; a request no route answers gets a static
 * asset, 405 with `Allow` when the path exists for other methods, or 404; a thrown
 * {@link ApiError} becomes its response, anything else a 500.
 */
export function mountRoutes(app: Hono, routes: readonly RouteSpec[], guards: RouteGuards): void {
  const { authorized, unauthorized } = bearerAuth(guards.token)
  const checkHost = hostGuard({
    ...(guards.allowedHosts ? { allowedHosts: guards.allowedHosts } : {}),
    ...(guards.trustHost ? { trustHost: true } : {}),
  })
  // Before every route, the assets and the 404: a page under a rebound name gets nothing.
  app.use('*', async (c, next) => {
    const refused = checkHost(c.req.raw, localPortOf(c))
    if (refused !== undefined) return refused
    await next()
  })
  const limit = limitBody(guards.maxBodyBytes)
  for (const route of routes) {
    app.on(route.method, route.path, async (c: Context) => {
      if (route.auth !== false && !authorized(c)) return unauthorized()
      if (route.method === 'GET') return route.handler(c)
      let response: Response | undefined
      const refused = await limit(c, async () => {
        response = await route.handler(c)
      })
      return refused ?? response!
    })
  }
  const patterns = routes.map((r) => ({ method: r.method, re: pathPattern(r.path) }))

  app.notFound(async (c) => {
    if (guards.assets && (c.req.method === 'GET' || c.req.method === 'HEAD')) {
      const asset = await guards.assets(c.req.raw)
      if (asset !== undefined) return asset
    }
    if (!authorized(c)) return unauthorized()
    const path = new URL(c.req.url).pathname
    const allowed = patterns.filter((p) => p.re.test(path)).map((p) => p.method)
    if (allowed.length > 0) {
      return errorResponse(405, 'method_not_allowed', `${c.req.method} is not allowed here`, {
        allow: [...new Set(allowed)].join(', '),
      })
    }
    return errorResponse(404, 'not_found', 'no such route')
  })
  app.onError((error) => {
    if (error instanceof ApiError) return error.toResponse()
    return errorResponse(500, 'internal_error', 'internal error')
  })
}
