import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { createService } from '../../server/src/main.js';
import { type OpenApiDocument, renderOpenApiTypes } from '../scripts/openapi-types.js';

const GENERATED = fileURLToPath(new URL('../src/generated/openapi.ts', import.meta.url));

/** The document the server serves, from the server's current source. */
async function serverOpenApiDocument(): Promise<OpenApiDocument> {
  const directory = mkdtempSync(join(tmpdir(), 'svc-sdk-openapi-'));
  const service = await createService(
    loadConfig({ NODE_ENV: 'test', DATA_DIR: directory, DATABASE_URL: `sqlite:${join(directory, 'openapi.sqlite')}` }),
  );
  try {
    const response = await service.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(response.statusCode).toBe(200);
    return response.json<OpenApiDocument>();
  } finally {
    await service.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

// `npm run generate -w @svc/sdk` runs this test with --update, which rewrites the file.
it('src/generated/openapi.ts is exactly what the server’s OpenAPI document generates', async () => {
  const source = renderOpenApiTypes(await serverOpenApiDocument());
  const formatted = await format(source, { ...(await resolveConfig(GENERATED)), filepath: GENERATED });
  await expect(formatted).toMatchFileSnapshot(GENERATED);
});
