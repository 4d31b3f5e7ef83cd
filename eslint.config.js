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

/** Nothing under modules/ reaches into the HTTP layer (docs/architecture.md, "Boundaries"). */
const NO_HTTP_LAYER = {
  regex: '(^|/)http/',
  message:
    'modules/ never imports http/: routes use lib/routes.ts, lib/principal.ts and lib/schemas.ts; the HTTP layer hands modules what they need (docs/architecture.md).',
};

/** Another module is used only through its service, its schemas (the objects it returns) or its wiring. */
const OTHER_MODULES_SURFACE = {
  regex: String.raw`^\.\./[a-z-]+/(?![a-z.-]*\.(service|schemas|module)\.js$)`,
  message:
    "Use another module only through its *.service.ts (or its *.schemas.ts types, or its *.module.ts wiring), never its store or internals (docs/architecture.md, 'Boundaries').",
};

/** Module wiring files compose the routes of the modules they wire. */
const OTHER_MODULES_SURFACE_FOR_WIRING = {
  ...OTHER_MODULES_SURFACE,
  regex: String.raw`^\.\./[a-z-]+/(?![a-z.-]*\.(service|schemas|module|routes)\.js$)`,
};

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
    // time and bytes. Tests may call their own server directly.
    files: ['packages/server/src/**/*.ts'],
    ignores: ['packages/server/src/lib/outbound-http*.ts', '**/*.test.ts', 'packages/server/src/test/**'],
    rules: {
      'no-restricted-globals': ['error', { name: 'fetch', message: OUTBOUND_HTTP_MESSAGE }],
      'no-restricted-imports': ['error', { paths: OUTBOUND_HTTP_PATHS }],
    },
  },
  {
    // Boundaries (docs/architecture.md): modules/ stays out of http/, and modules use each other
    // only through their service files. Tests and test helpers may reach into another module's store.
    files: ['packages/server/src/modules/**/*.ts'],
    ignores: ['**/*.test.ts', '**/*.testing.ts', '**/*.fixtures.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: OUTBOUND_HTTP_PATHS, patterns: [NO_HTTP_LAYER, OTHER_MODULES_SURFACE] }] },
  },
  {
    files: ['packages/server/src/modules/**/*.module.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: OUTBOUND_HTTP_PATHS, patterns: [NO_HTTP_LAYER, OTHER_MODULES_SURFACE_FOR_WIRING] }],
    },
  },
  {
    files: [
      'packages/server/src/modules/**/*.test.ts',
      'packages/server/src/modules/**/*.testing.ts',
      'packages/server/src/modules/**/*.fixtures.ts',
    ],
    rules: { 'no-restricted-imports': ['error', { patterns: [NO_HTTP_LAYER] }] },
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
