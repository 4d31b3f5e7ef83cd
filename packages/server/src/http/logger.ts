import pino, { type Logger } from 'pino';
import type { Config } from '../config.js';

/**
 * Structured JSON logs. Credentials and secrets are redacted wherever they might appear; request
 * bodies are never logged.
 */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({
    level: config.logLevel,
    base: { service: 'svc' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'req.headers.cookie',
        '*.password',
        '*.secret',
        '*.secret_key',
        '*.secretKey',
        '*.token',
        '*.refresh_token',
        '*.client_secret',
      ],
      censor: '[redacted]',
    },
  });
}
