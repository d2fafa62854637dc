import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites that start real servers or browsers must not be skipped silently in CI.
    allowOnly: false,
    passWithNoTests: false,
  },
})
