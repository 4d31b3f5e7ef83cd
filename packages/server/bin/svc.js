#!/usr/bin/env node
// The `svc` command. The TypeScript sources are compiled to dist/ by `npm install` (the root
// `prepare` script) and by `npm start`; this file only hands over to the compiled CLI.
import { runCli } from '../dist/cli.js';

process.exitCode = await runCli(process.argv.slice(2));
