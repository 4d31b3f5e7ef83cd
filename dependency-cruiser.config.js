// @ts-check
// Module boundaries of packages/server/src, checked on RESOLVED paths by dependency-cruiser, so a
// relative path of any shape (`../../modules/x/…`, `./../x/…`), a re-export (`export … from`) and a
// dynamic `import()` are all caught. `npm run lint` runs scripts/check-boundaries.js, which applies
// these rules and also fails on a cycle between modules (MODULE_CYCLE_ALLOWANCES below).
// The layering is described in docs/architecture.md, "Boundaries".

const SRC = '^packages/server/src';

/** Tests and test helpers compose whatever they test, so the layering rules do not bind them. */
const TEST_CODE = [String.raw`\.test\.ts$`, String.raw`\.testing\.ts$`, String.raw`\.fixtures\.ts$`, `${SRC}/test/`];

/** What a module shows other modules: its services, the objects they return, its wiring. */
const MODULE_SURFACE = String.raw`\.(service|schemas|module)\.ts$`;

/** A wiring file (`*.module.ts`) may also compose another module's routes. */
const MODULE_SURFACE_FOR_WIRING = String.raw`\.(service|schemas|module|routes)\.ts$`;

/** The ledger module's public entry points (docs/architecture.md, "Boundaries"). */
const LEDGER_ENTRY_POINTS = `${SRC}/modules/ledger/(ledger\\.service|ledger\\.schemas|holds\\.schemas)\\.ts$`;

/** The composition root and the CLI, which construct everything. */
const ROOT = `${SRC}/(main|cli)\\.ts$`;

/**
 * Edges between modules allowed to close a cycle, each named with the reason it is still there.
 * None today: the modules form a graph without cycles. scripts/check-boundaries.js leaves these edges
 * out of the module graph, fails on any other cycle, and fails when an allowance no longer closes one.
 * @type {ReadonlyArray<{ from: string; to: string; why: string }>}
 */
export const MODULE_CYCLE_ALLOWANCES = [];

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'modules-not-http',
      comment:
        'Nothing under modules/ (tests included) imports http/: routes register with lib/routes.ts, lib/principal.ts and lib/schemas.ts; what the HTTP layer builds for a module is handed to it by main.ts.',
      severity: 'error',
      from: { path: `${SRC}/modules/` },
      to: { path: `${SRC}/http/` },
    },
    {
      name: 'module-surface',
      comment:
        'A module uses another module only through its *.service.ts, *.schemas.ts or *.module.ts, never its store or internals (static imports, re-exports and dynamic imports alike). Tests, *.testing.ts and *.fixtures.ts may reach further.',
      severity: 'error',
      from: { path: `${SRC}/modules/([^/]+)/`, pathNot: [...TEST_CODE, String.raw`\.module\.ts$`] },
      to: { path: `${SRC}/modules/`, pathNot: [`${SRC}/modules/$1/`, MODULE_SURFACE] },
    },
    {
      name: 'ledger-public-entry-points',
      comment:
        "The ledger engine (modules/ledger/) shows other modules three files: ledger.service.ts (LedgerService, and what the wallets API reads of the ledger), ledger.schemas.ts and holds.schemas.ts (the movements' shapes). Its other services and schemas, if it grows any, stay inside. Tests may reach further.",
      severity: 'error',
      from: { path: `${SRC}/modules/(?!ledger/)[^/]+/`, pathNot: TEST_CODE },
      to: { path: `${SRC}/modules/ledger/`, pathNot: LEDGER_ENTRY_POINTS },
    },
    {
      name: 'module-surface-wiring',
      comment: "A module's wiring (*.module.ts) uses another module through its service, schemas, wiring or routes.",
      severity: 'error',
      from: { path: `${SRC}/modules/([^/]+)/[^/]+\\.module\\.ts$` },
      to: { path: `${SRC}/modules/`, pathNot: [`${SRC}/modules/$1/`, MODULE_SURFACE_FOR_WIRING] },
    },
    {
      name: 'no-reexport-of-module-internals',
      comment:
        "No file under modules/ (test helpers included) re-exports another module's internals: what one module re-exports from another is that module's service, schemas or wiring.",
      severity: 'error',
      from: { path: `${SRC}/modules/([^/]+)/` },
      to: { path: `${SRC}/modules/`, pathNot: [`${SRC}/modules/$1/`, MODULE_SURFACE], dependencyTypes: ['export'] },
    },
    {
      name: 'modules-not-above-them',
      comment: 'Modules never import security/, the composition root (main.ts, cli.ts) or the test helpers.',
      severity: 'error',
      from: { path: `${SRC}/modules/`, pathNot: TEST_CODE },
      to: { path: [`${SRC}/security/`, `${SRC}/test/`, ROOT] },
    },
    {
      name: 'lib-imports-no-layer-above',
      comment:
        'lib/ is the bottom layer: ids, clock, errors, crypto and the contracts between the HTTP layer and the modules. It may use db/ types, never a module, http/, jobs/ or security/.',
      severity: 'error',
      from: { path: `${SRC}/lib/`, pathNot: TEST_CODE },
      to: { path: [`${SRC}/(modules|http|jobs|security|test)/`, ROOT] },
    },
    {
      name: 'db-imports-no-layer-above',
      comment: 'db/ (connections, transactions, table types, migrations) imports no module, http/, jobs/ or security/.',
      severity: 'error',
      from: { path: `${SRC}/db/`, pathNot: [...TEST_CODE, `${SRC}/db/backup\\.ts$`] },
      to: { path: [`${SRC}/(modules|http|jobs|security|test)/`, ROOT] },
    },
    {
      name: 'db-backup-verifies-the-ledger-only',
      comment:
        "db/backup.ts checks a backup or restored copy with the ledger invariants of modules/ledger/ledger.verify.ts (docs/operations.md, 'Backups') and imports nothing else above db/.",
      severity: 'error',
      from: { path: `${SRC}/db/backup\\.ts$` },
      to: { path: [`${SRC}/(modules|http|jobs|security|test)/`, ROOT], pathNot: `${SRC}/modules/ledger/ledger\\.verify\\.ts$` },
    },
    {
      name: 'jobs-use-module-services',
      comment:
        'jobs/ (the scheduler and the periodic jobs) uses a module only through its service or schemas, and never http/ or security/.',
      severity: 'error',
      from: { path: `${SRC}/jobs/`, pathNot: TEST_CODE },
      to: {
        path: [`${SRC}/(modules|http|security|test)/`, ROOT],
        pathNot: `${SRC}/modules/[^/]+/[^/]+\\.(service|schemas)\\.ts$`,
      },
    },
    {
      name: 'security-uses-module-surfaces',
      comment:
        "security/ (sealed columns across modules, ADR 0015) reads a module's service or schemas, or the file that declares its sealing contexts (mfa/second-factor.ts, sessions/signing-keys.ts, webhooks/webhooks.secrets.ts); never a store, http/ or jobs/.",
      severity: 'error',
      from: { path: `${SRC}/security/`, pathNot: TEST_CODE },
      to: {
        path: [`${SRC}/(modules|http|jobs|test)/`, ROOT],
        pathNot: [
          `${SRC}/modules/[^/]+/[^/]+\\.(service|schemas)\\.ts$`,
          `${SRC}/modules/mfa/second-factor\\.ts$`,
          `${SRC}/modules/sessions/signing-keys\\.ts$`,
          `${SRC}/modules/webhooks/webhooks\\.secrets\\.ts$`,
        ],
      },
    },
    {
      name: 'http-uses-module-surfaces',
      comment:
        'http/ knows a module through its service, schemas, wiring or routes, and the event catalog (events/event-types.ts) it documents in OpenAPI; never a store, jobs/, security/ or the composition root.',
      severity: 'error',
      from: { path: `${SRC}/http/`, pathNot: TEST_CODE },
      to: {
        path: [`${SRC}/(modules|jobs|security|test)/`, ROOT],
        pathNot: [`${SRC}/modules/[^/]+/[^/]+\\.(service|schemas|module|routes)\\.ts$`, `${SRC}/modules/events/event-types\\.ts$`],
      },
    },
    {
      name: 'no-test-code-in-production',
      comment: 'Production code never imports tests, *.testing.ts, *.fixtures.ts or the test helpers under test/.',
      severity: 'error',
      from: { path: SRC, pathNot: TEST_CODE },
      to: { path: TEST_CODE },
    },
  ],
  options: {
    // Type-only imports are dependencies too: a module's types are part of its surface.
    tsPreCompilationDeps: true,
    includeOnly: `${SRC}/`,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
  },
};
