#!/usr/bin/env bash
# The unit project (`vitest run --project unit`) N times in a row with every core
# kept busy by Debian's stress-ng, the way a loaded CI box or a laptop running
# other suites runs it. Prints one line per run and then the pass/fail count and
# the wall times; each run's full output stays in the log directory, so a
# failure can be read afterwards. A flaky test shows up here as a failure count
# above 0 (docs/test-suite.md has the figures).
#
#   scripts/unit-under-load.sh            # 20 runs, stress-ng --cpu <cores>
#   scripts/unit-under-load.sh 5          # 5 runs
#   BUILD_FIRST=1 scripts/unit-under-load.sh   # `npm run build` before each run, as `npm test` does
# STRESS_CPUS sets stress-ng's CPU workers (default: the number of cores; 0 runs without load);
# STRESS_ARGS replaces stress-ng's arguments altogether (e.g. '--cpu 4 --hdd 1 --vm 1 --vm-bytes 1G');
# UNIT_LOGS sets where the outputs go (default: a new directory under $TMPDIR).
set -euo pipefail

runs="${1:-20}"
cpus="${STRESS_CPUS:-$(nproc)}"
logs="${UNIT_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/unit-under-load.XXXXXX")}"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$logs"

stress_args="${STRESS_ARGS:---cpu $cpus}"
if [ -n "${STRESS_ARGS:-}" ] || [ "$cpus" -gt 0 ]; then
  command -v stress-ng >/dev/null || { echo "unit-under-load: stress-ng is missing (apt-get install stress-ng)" >&2; exit 2; }
  # shellcheck disable=SC2086 # the arguments are words
  stress-ng $stress_args --timeout 0 --quiet &
  stress_pid=$!
  # stress-ng ends the workers it forked when it is itself told to end.
  trap 'kill -TERM "$stress_pid" 2>/dev/null || true; wait "$stress_pid" 2>/dev/null || true' EXIT
  trap 'exit 130' INT TERM
fi

cd "$root"
passed=0
failed=0
times=()
for i in $(seq 1 "$runs"); do
  log="$logs/run-$i.log"
  if [ "${BUILD_FIRST:-0}" = 1 ]; then npm run -s build >"$logs/build-$i.log" 2>&1; fi
  start=$(date +%s.%N)
  if CI=1 node node_modules/vitest/vitest.mjs run --project unit >"$log" 2>&1; then
    result=pass
    passed=$((passed + 1))
  else
    result=FAIL
    failed=$((failed + 1))
  fi
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  times+=("$(printf '%.1f' "$wall")")
  printf 'run %2d: %s %6.1fs  %s\n' "$i" "$result" "$wall" "$log"
  if [ "$result" = FAIL ]; then sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^ *(FAIL|×|Error:|AssertionError)' | head -5 | sed 's/^/        /'; fi
done

[ -n "${stress_pid:-}" ] || stress_args='none'
echo "unit under load (stress-ng $stress_args): $passed passed, $failed failed of $runs; walls ${times[*]} s; logs in $logs"
[ "$failed" -eq 0 ]
