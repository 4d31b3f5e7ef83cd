// Writes docs/errors.md from the error catalog in code. Run with `npm run docs:errors`.
import { writeFileSync } from 'node:fs';
import { renderErrorCatalogMarkdown } from '../packages/server/dist/lib/errors.js';

writeFileSync(new URL('../docs/errors.md', import.meta.url), renderErrorCatalogMarkdown());
