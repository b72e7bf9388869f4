#!/usr/bin/env bash
# Runs real crates' loom test suites, unchanged, from the crate registry on cmc
# (crates/loom, package `loom`, through `--config patch.crates-io.loom.path`),
# and with `--compare` also on the registry's loom in the same run. `--more` adds the
# suites of concurrent-queue 2.5.0 and bytes 1.12.2 (expected to pass). `--loom-own` runs
# only loom 0.7.3's own `tests/`, unchanged, on cmc and on loom, and prints per test file
# the tests both finished and their executions (minutes: builds loom's dev-dependencies).
#
# oneshot: the loom suite of 0.1.11 (which added `poll_then_drop_receiver_during_send`
# with the fix of the race it catches) against the library of 0.1.10 (must fail that
# test, and only that one, on loom), of 0.1.11 (must pass on loom) and of 0.1.12 with its
# own suite (must pass). On cmc, 0.1.10 and 0.1.11 also fail two more tests, and all
# three as uses after free (frees racing with accesses, which 0.1.12 fixed).
# Exit status 0 only when every expectation holds. Builds go to target/loom-suites (kept
# between runs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
compare=false more=false own=false
for arg in "$@"; do
    case $arg in
    --compare) compare=true ;;
    --more) more=true ;; # also the suites too slow to build for CI
    --loom-own) own=true ;;
    *) echo "usage: $0 [--compare] [--more] | --loom-own" >&2 && exit 2 ;;
    esac
done
work=${TMPDIR:-/tmp}/cmc-loom-suites
export CARGO_TARGET_DIR=$root/target/loom-suites

# The unpacked registry source of crate $1 at version $2, fetched with a throwaway
# manifest (semver-compatible versions cannot share one).
registry_src() {
    local fetch=$work/fetch-$1-$2
    mkdir -p "$fetch/src"
    touch "$fetch/src/lib.rs"
    printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n%s = "=%s"\n[workspace]\n' \
        "$1" "$2" >"$fetch/Cargo.toml"
    cargo fetch --quiet --manifest-path "$fetch/Cargo.toml"
    ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$1-$2" | head -n 1
}

# Copies crate $1 version $2 to $work/$1-$2 with the tests of version $3, standalone.
prepare() {
    local dir=$work/$1-$2
    rm -rf "$dir"
    cp -r "$(registry_src "$1" "$2")" "$dir"
    chmod -R u+w "$dir"
    rm -rf "$dir/tests"
    cp -r "$(registry_src "$1" "$3")/tests" "$dir/tests"
    printf '\n[workspace]\n' >>"$dir/Cargo.toml"
    # A crate published without a lock file gets one resolved now.
    [[ -f $dir/Cargo.lock ]] || cargo generate-lockfile --quiet --manifest-path "$dir/Cargo.toml"
    cp "$dir/Cargo.lock" "$dir/Cargo.lock.registry"
}

# loom 0.7.3's own test files in a package of their own, run on cmc (executions from
# CMC_LOOM_STATS) and on loom (`LOOM_LOG` prints "Completed in N iterations" per model),
# one test at a time; prints per file: tests both finished, loom's and cmc's executions,
# and each test that failed on either tool.
loom_own() {
    local dir=$work/loom-own patch=(--config "patch.crates-io.loom.path=\"$root/crates/loom\"") t
    rm -rf "$dir" && mkdir -p "$dir/src" && touch "$dir/src/lib.rs"
    cp -r "$(registry_src loom 0.7.3)/tests" "$dir/tests"
    printf '[package]\nname = "loom-own"\nversion = "0.0.0"\nedition = "2021"\n[features]\ndefault = ["futures"]\nfutures = []\n[dev-dependencies]\nloom = { version = "=0.7.3", features = ["futures", "checkpoint"] }\nfutures-util = "0.3"\n[workspace]\n' >"$dir/Cargo.toml"
    cargo generate-lockfile --quiet --manifest-path "$dir/Cargo.toml"
    LOOM_LOG=loom::model=info cargo test --release --manifest-path "$dir/Cargo.toml" --tests \
        --no-fail-fast -- --nocapture --test-threads=1 >"$dir/loom.log" 2>&1 || true
    cargo update --quiet --manifest-path "$dir/Cargo.toml" "${patch[@]}" -p loom
    rm -f "$dir/cmc.stats" "$dir/cmc.log"
    for t in "$dir"/tests/*.rs; do # one target at a time: a crash ends only its file
        CMC_LOOM_STATS=$dir/cmc.stats cargo test --release --manifest-path "$dir/Cargo.toml" \
            "${patch[@]}" --test "$(basename "$t" .rs)" -- --test-threads=1 >>"$dir/cmc.log" 2>&1 || true
    done
    # loom: "test NAME ... " then its models' "Completed in N iterations" lines.
    awk '/Running tests\// { split($2, p, "/"); file = p[2] }
         /^test .* \.\.\. / { name = $2; of[name] = file }
         /Completed in [0-9]+ iterations/ { n = $0; sub(/.*Completed in /, "", n); sub(/ .*/, "", n); loom[name] += n }
         END { for (t in loom) print "L", of[t], t, loom[t] }' "$dir/loom.log" >"$dir/counts"
    awk '{ cmc[$2] += $1 } END { for (t in cmc) print "C", t, cmc[t] }' "$dir/cmc.stats" >>"$dir/counts"
    awk '$1 == "L" { file[$3] = $2; loom[$3] = $4 } $1 == "C" { cmc[$2] = $3 }
         END { for (t in loom) if (t in cmc) { n[file[t]]++; l[file[t]] += loom[t]; c[file[t]] += cmc[t]
                   if (cmc[t] > 2 * loom[t]) slow = slow " " t " (" cmc[t] " vs " loom[t] ")" }
               for (f in n) { printf "%-24s tests %3d  loom %8d  cmc %6d\n", f, n[f], l[f], c[f] | "sort"; T += n[f]; L += l[f]; C += c[f] }
               close("sort")
               printf "%-24s tests %3d  loom %8d  cmc %6d\n", "total", T, L, C
               print "cmc above 2x loom:" slow }' "$dir/counts"
    for tool in loom cmc; do
        echo "$tool: $(awk '/^test result/ { p += $4; f += $6 } END { print p + 0 " passed, " f + 0 " failed" }' "$dir/$tool.log"): $(grep -E '^test .* FAILED$' "$dir/$tool.log" | awk '{print $2}' | xargs)"
    done
    grep -h 'cmc: virtual thread .* overflowed' "$dir/cmc.log" || true
}
if $own; then
    loom_own
    exit 0
fi

failures=0
# Runs crate dir $1's loom suite (cfg flags $2, cargo arguments $5) on `cmc` or `loom`
# ($3); checks that the failing tests are exactly $4 (space-separated, may be empty).
run() {
    local dir=$1 cfg=$2 tool=$3 expected=$4 args=$5 patch=() log start end failed
    [[ $tool == cmc ]] && patch=(--config "patch.crates-io.loom.path=\"$root/crates/loom\"")
    log=$work/$(basename "$dir")-$tool.log
    # The crate's own lock file, with loom moved to the patch for cmc.
    cp "$dir/Cargo.lock.registry" "$dir/Cargo.lock"
    if [[ $tool == cmc ]]; then
        cargo update --quiet --manifest-path "$dir/Cargo.toml" "${patch[@]}" -p loom
    fi
    rm -f "$log.executions"
    start=$(date +%s.%N)
    RUSTFLAGS="$cfg" CMC_LOOM_STATS=$log.executions cargo test --release --manifest-path "$dir/Cargo.toml" \
        "${patch[@]}" $args --no-fail-fast >"$log" 2>&1 || true
    end=$(date +%s.%N)
    failed=$(grep -E '^test .* \.\.\. FAILED$' "$log" | awk '{print $2}' | sort | xargs || true)
    passed=$(grep -cE '^test .* \.\.\. ok$' "$log" || true)
    # A test that aborts the process (loom: a panic while unwinding) has no result line.
    if grep -q 'SIGABRT' "$log"; then
        for t in $(grep -oE "^thread '[^']+' \([0-9]+\) panicked" "$log" | cut -d"'" -f2 | sort -u); do
            grep -qE "^test $t \.\.\. " "$log" || failed=$(echo "$failed $t" | xargs -n1 | sort -u | xargs)
        done
    fi
    executions=$(awk '{s+=$1} END {print s+0}' "$log.executions" 2>/dev/null || echo 0)
    # A model whose runs depend on something outside the checker (oneshot's
    # recv_timeout reads std::time::Instant under loom), as cmc or loom report it, is
    # listed apart, not counted against the expectation.
    unstable=""
    for t in $failed; do
        if sed -n "/^---- $t stdout ----/,/^----/p" "$log" | grep -q 'cmc: non-determinism' ||
            grep -A1 "^thread '$t'" "$log" | grep -q 'Is the model fully deterministic'; then
            unstable="$unstable $t"
        fi
    done
    failed=$(for t in $failed; do [[ " $unstable " == *" $t "* ]] || echo "$t"; done | xargs)
    tests=$( (grep -oE 'finished in [0-9.]+s' "$log" | grep -oE '[0-9.]+' || true) | awk '{s+=$1} END {print s+0}')
    printf '%-14s %-5s passed %s, failed [%s], non-deterministic [%s], executions %s, tests %.2f s, cargo %.1f s\n' \
        "$(basename "$dir")" "$tool" "$passed" "$failed" "${unstable# }" "$executions" "$tests" \
        "$(awk "BEGIN {print $end - $start}")"
    if [[ $failed != "$expected" ]] || ! grep -qE '^test result|SIGABRT' "$log"; then
        echo "  expected failures [$expected], got [$failed]; log: $log"
        failures=$((failures + 1))
    fi
}

prepare oneshot 0.1.10 0.1.11
prepare oneshot 0.1.11 0.1.11
prepare oneshot 0.1.12 0.1.12
if $more; then
    prepare concurrent-queue 2.5.0 2.5.0
    prepare bytes 1.12.2 1.12.2
fi
for tool in cmc $($compare && echo loom); do
    oneshot=(--cfg oneshot_loom)
    uaf=$([[ $tool == cmc ]] && echo async_recv poll_then_drop_receiver_during_send recv_drop_sender_different_threads || true)
    run "$work/oneshot-0.1.10" "${oneshot[*]}" "$tool" "${uaf:-poll_then_drop_receiver_during_send}" "--features loom --test loom"
    run "$work/oneshot-0.1.11" "${oneshot[*]}" "$tool" "$uaf" "--features loom --test loom"
    run "$work/oneshot-0.1.12" "${oneshot[*]}" "$tool" "" "--features loom --test loom"
    if $more; then
        run "$work/concurrent-queue-2.5.0" "--cfg loom" "$tool" "" "--features loom --test loom"
        run "$work/bytes-1.12.2" "--cfg loom" "$tool" "" "--lib"
    fi
done
exit $((failures > 0))
