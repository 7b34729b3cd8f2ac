import { spawn } from 'node:child_process';
import { REPO_ROOT, SPOOL_ENTRY } from './process.ts';

// A pseudo-terminal without native modules: Python's pty forks the process onto one (120 columns)
// and relays bytes both ways, so the bot sees a TTY on stdin, stdout and stderr.
const RELAY = `
import fcntl, os, pty, select, struct, sys, termios
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 40, 120, 0, 0))
inputs = [fd, 0]
while True:
    ready, _, _ = select.select(inputs, [], [])
    if 0 in ready:
        data = os.read(0, 1024)
        if data:
            os.write(fd, data)
        else:
            inputs.remove(0)
    if fd in ready:
        try:
            data = os.read(fd, 4096)
        except OSError:
            data = b''
        if not data:
            break
        os.write(1, data)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
`;

export interface TerminalSession {
  /** Types keys: '\\r' is Enter, '\\x1b[A' the up arrow, '\\x03' Ctrl-C. */
  type(keys: string): void;
  /** Everything the terminal has shown so far, escape codes included. */
  screen(): string;
  /** Resolves when the screen shows `pattern` (after `from` chars, if given). */
  waitFor(pattern: RegExp | string, from?: number): Promise<void>;
  exited: Promise<number | null>;
  /**
   * Ends the session if it is still running (a failed test's), so the next one finds the data
   * directory free: the bot gets SIGHUP as its terminal goes.
   */
  end(): Promise<void>;
}

/**
 * Spool as `npm start` runs it (see startSpool) on a pseudo-terminal, with only the given
 * environment.
 */
export function onTerminal(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): TerminalSession {
  const child = spawn('python3', ['-c', RELAY, process.execPath, ...SPOOL_ENTRY.built, ...args], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TERM: 'xterm-256color',
      ...env,
    },
  });
  let shown = '';
  const listeners = new Set<() => void>();
  child.stdout.on('data', (d: Buffer) => {
    shown += d.toString();
    for (const listener of listeners) listener();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  void exited.then(() => clearTimeout(timer));
  return {
    type: (keys) => void child.stdin.write(keys),
    screen: () => shown,
    waitFor: (pattern, from = 0) =>
      new Promise<void>((resolve, reject) => {
        const matches = () =>
          typeof pattern === 'string'
            ? shown.indexOf(pattern, from) !== -1
            : pattern.test(shown.slice(from));
        // Within the test's own limit (60 s), so that a screen that never shows it says what it
        // did; not much within it: on a loaded two-core machine four MCP servers once took more than
        // 20 s to start before the first prompt.
        const giveUp = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`never showed ${String(pattern)}; the screen:\n${shown.slice(-3_000)}`));
        }, 40_000);
        const check = () => {
          if (!matches()) return;
          clearTimeout(giveUp);
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        check();
        void exited.then(() =>
          matches()
            ? resolve()
            : reject(new Error(`exited before showing ${String(pattern)}; the screen:\n${shown}`)),
        );
      }),
    exited,
    end: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
