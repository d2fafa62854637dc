/** The package version, reported by `GET /v1/health` (a test keeps it equal to package.json). */
export const VERSION = '0.1.0'
