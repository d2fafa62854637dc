import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.bench-data/**',
      'coverage/**',
      'src/kernel/validators.generated.ts',
      'web-demo/dist/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        console: 'readonly',
        process: 'readonly',
        URL: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // The core is Web-standard only: it must run unchanged in Node, workerd and Chromium.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'src/ is Web-standard only: no node:* imports.' },
            {
              group: [
                'fs',
                'fs/*',
                'path',
                'os',
                'child_process',
                'crypto',
                'stream',
                'buffer',
                'util',
                'url',
                'http',
                'https',
                'net',
              ],
              message: 'src/ is Web-standard only: no Node built-ins.',
            },
            {
              group: ['../adapters/*', '../../adapters/*', '../edge/*', '../../edge/*'],
              message: 'src/ imports no adapter or edge code.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'src/ is Web-standard only: no process.' },
        { name: 'Buffer', message: 'src/ is Web-standard only: use Uint8Array.' },
        { name: 'require', message: 'src/ is ESM and Web-standard only.' },
        { name: '__dirname', message: 'src/ is Web-standard only.' },
        { name: 'window', message: 'src/ uses no DOM.' },
        { name: 'document', message: 'src/ uses no DOM.' },
      ],
    },
  },
)
