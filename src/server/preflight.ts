/**
 * Before an install reads the archive: this box can run the build. Each
 * refusal is one line naming the fix (exit 2). What is not known about the
 * builds (the CPU features, the lowest glibc) is not guessed at: it is
 * reported, never refused (docs/assumptions.md).
 */
import { usageError } from '../core/errors.js';

/** Architectures with a published Linux build (x86-64 seen; arm64 when agent.json lists one). */
const BUILT_FOR = new Set(['x64']);

export interface Preflight {
  arch: string;
  glibc: string;
}

export interface PreflightInput {
  arch: string;
  /** glibcVersionRuntime from the process report; undefined on musl. */
  glibc: string | undefined;
  /** agent.json lists a command for this platform. */
  agentListsPlatform: boolean;
}

export function glibcRuntime(): string | undefined {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime;
}

export function preflight(input: PreflightInput): Preflight {
  if (!BUILT_FOR.has(input.arch) && !input.agentListsPlatform)
    throw usageError(
      `The server is built for Linux x86-64; this machine is ${input.arch}.`,
      "install on an x86-64 box, or pass --agent-json with the registry's build for this platform",
    );
  if (input.glibc === undefined)
    throw usageError(
      'The server builds need glibc; this system has none (musl, e.g. Alpine).',
      'install on a glibc distribution (Debian, Ubuntu, RHEL), or in a glibc container',
    );
  return { arch: input.arch, glibc: input.glibc };
}
