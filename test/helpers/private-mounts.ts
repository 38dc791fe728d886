/**
 * The shell lines that mount over directories in a private mount namespace
 * (`unshare --mount --propagation private sh -euc …`) and then bind one
 * directory back where it was, so a checkout in a directory mounted over (a
 * clone in `mktemp -d` under /tmp) is still there.
 */

/** `mounts`, run with the directory `keep` (a shell word, e.g. "$PWD") held open and bound back after them. */
export function mountsKeeping(keep: string, mounts: readonly string[]): string[] {
  return [
    `d=${keep}; exec 3<"$d"`,
    ...mounts,
    'mkdir -p "$d"; mount --no-canonicalize --bind /proc/self/fd/3 "$d"; exec 3<&-',
  ];
}
