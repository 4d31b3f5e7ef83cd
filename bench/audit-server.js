// The service as `svc serve` runs it, for the audit benchmark (scenarios/audit.js): with
// `--no-audit` it writes no audit entries (ServiceOptions.auditRecording = false), the baseline a
// credit's audit write is measured against. Never for anything but the benchmark. Run as a child
// process with the service's environment; stops on SIGTERM or SIGINT.
import { loadConfig } from '../packages/server/dist/config.js';
import { startService } from '../packages/server/dist/main.js';

const running = await startService(loadConfig(), { auditRecording: !process.argv.includes('--no-audit') });

function stop() {
  void running.stop().then(() => process.exit(0));
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
