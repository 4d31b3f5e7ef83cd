import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';

type LogMethod = (...args: unknown[]) => void;

/**
 * A request's logger that makes pino's child logger (with the request id bound) only when a line
 * is actually written. Most requests write none below `info`, and making the child on every
 * request cost more than a fifth of a trivial route (measured in bench/).
 */
class LazyChildLogger implements FastifyBaseLogger {
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: Logger | undefined;

  constructor(parent: Logger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }

  set level(level: string) {
    this.#materialize().level = level;
  }

  fatal = this.#method('fatal');
  error = this.#method('error');
  warn = this.#method('warn');
  info = this.#method('info');
  debug = this.#method('debug');
  trace = this.#method('trace');
  silent = (): void => undefined;

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#materialize().child(bindings, options);
  }

  #materialize(): Logger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  #method(level: Level): LogMethod {
    return (...args: unknown[]) => {
      if (!(this.#child ?? this.#parent).isLevelEnabled(level)) return;
      const logger = this.#materialize();
      const write: LogMethod = logger[level].bind(logger);
      write(...args);
    };
  }
}

export function lazyChildLoggerFactory(parent: Logger) {
  return (_logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger =>
    new LazyChildLogger(parent, bindings, options);
}
