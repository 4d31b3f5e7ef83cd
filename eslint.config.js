// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const OUTBOUND_HTTP_MESSAGE =
  'Send outbound HTTP requests with OutboundHttp from lib/outbound-http.ts: it refuses private and metadata addresses (SSRF).';

const OUTBOUND_HTTP_PATHS = [
  { name: 'undici', message: OUTBOUND_HTTP_MESSAGE },
  ...['http', 'https', 'node:http', 'node:https'].map((name) => ({
    name,
    importNames: ['request', 'get', 'Agent', 'globalAgent', 'default'],
    message: OUTBOUND_HTTP_MESSAGE,
  })),
];

export default tseslint.config(
  { ignores: ['test-results/**', '**/dist/**', '**/node_modules/**', 'data/**', 'coverage/**', 'packages/dashboard/public/vendor/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'scripts/*.js', 'packages/*/bin/*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/no-unnecessary-condition': 'off',
      '@typescript-eslint/require-await': 'off',
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ExportDefaultDeclaration',
          message: 'Named exports only: a default export can be imported under any name.',
        },
      ],
    },
  },
  {
    // Outbound requests to user-supplied URLs go through packages/server/src/lib/outbound-http.ts,
    // which checks the resolved address (SSRF, DNS rebinding), never follows redirects and bounds
    // time and bytes. Tests may call their own server directly. The module boundaries are checked on
    // resolved paths by dependency-cruiser (dependency-cruiser.config.js, scripts/check-boundaries.js).
    files: ['packages/server/src/**/*.ts'],
    ignores: ['packages/server/src/lib/outbound-http*.ts', '**/*.test.ts', 'packages/server/src/test/**'],
    rules: {
      'no-restricted-globals': ['error', { name: 'fetch', message: OUTBOUND_HTTP_MESSAGE }],
      'no-restricted-imports': ['error', { paths: OUTBOUND_HTTP_PATHS }],
    },
  },
  {
    files: ['**/*.js', 'eslint.config.js', 'vitest.config.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' },
    },
  },
  {
    files: ['**/*.test.ts', '**/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
);
