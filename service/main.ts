import { ConfigError, loadConfig } from '../src/config.js';
import { EmbeddedPostgresError } from '../src/infra/embedded-postgres.js';
import { NatsSetupError } from '../src/infra/nats.js';
import { createLogger } from '../src/logger.js';
import { UnreadableSecretError } from '../src/secrets/key-ring.js';
import { startService } from './start.js';

/**
 * `npm start`: the edge and every worker pool in one process, or one side of them with ROLE=edge /
 * ROLE=workers (also `--role <role>`), so that operators can scale each side on its own.
 */
function roleFromArgs(argv: string[]): string | undefined {
  const i = argv.indexOf('--role');
  if (i >= 0) return argv[i + 1];
  return argv.find((a) => a.startsWith('--role='))?.slice('--role='.length);
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig({ ...process.env, ...(roleFromArgs(process.argv) ? { ROLE: roleFromArgs(process.argv) } : {}) });
  } catch (err) {
    if (err instanceof ConfigError) return fail(err.message);
    throw err;
  }
  const log = createLogger({ level: config.logLevel, format: config.logFormat });

  // The signals are taken before the start: a process that already serves requests while it still
  // starts (its endpoints answer before its job pools are up) is stopped as gracefully as a started
  // one. Without this, a SIGTERM in those seconds killed it with the requests it held (seen on a
  // loaded machine: the request a worker held was never answered).
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  let stopping: string | undefined;
  const stop = (signal: string) => {
    service!.stop().then(
      () => {
        log.info({ signal }, 'stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const shutdown = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stopping = signal;
    log.info({ signal }, service ? 'shutting down' : 'shutting down once started');
    if (service) stop(signal);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  // A closed terminal: node's default would exit at once and leave the embedded Postgres and the
  // spawned nats-server running.
  process.on('SIGHUP', shutdown);

  try {
    // A child server that cannot be restarted, or a NATS that refuses this process for good, ends
    // the process: whatever runs it (systemd, Kubernetes, an operator) takes over from here. Its
    // exit hooks stop the other children.
    service = await startService(config, log, { onChildLost: (err) => fail(err.message), onNatsLost: fail });
  } catch (err) {
    if (err instanceof NatsSetupError || err instanceof EmbeddedPostgresError || err instanceof ConfigError || err instanceof UnreadableSecretError) return fail(err.message);
    log.fatal({ err }, 'start failed');
    process.exit(1);
  }
  if (stopping) {
    log.info({ signal: stopping }, 'shutting down');
    stop(stopping);
  }
}

function fail(message: string): void {
  process.stderr.write(`checkout-platform: ${message}\n`);
  process.exit(1);
}

await main();
