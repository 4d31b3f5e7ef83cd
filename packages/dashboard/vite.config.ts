import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The service serves dist/ at /dashboard: hashed files under assets/ are cached for a year,
// index.html is revalidated on every load (packages/server/src/modules/dashboard/dashboard.routes.ts).
// `npm run build` (scripts/build.js) builds into a directory of its own and then renames it to dist/.
// eslint-disable-next-line no-restricted-syntax -- Vite reads its configuration from the default export.
export default defineConfig({
  base: '/dashboard/',
  // The page calls the service through the SDK, bundled from its source (no build of packages/sdk needed first).
  resolve: { alias: { '@svc/sdk': fileURLToPath(new URL('../sdk/src/index.ts', import.meta.url)) } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // index.html loads one script; the CSP forbids inline scripts, so Vite must not inline any.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  oxc: { jsx: { runtime: 'automatic' } },
});
