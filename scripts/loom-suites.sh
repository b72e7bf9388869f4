#!/usr/bin/env bash
# Runs real crates' loom test suites, unchanged, from the crate registry on cmc
# (crates/loom, package `loom`, through `--config patch.crates-io.loom.path`),
# and with `--compare` also on the registry's loom in the same run. `--more` adds the
# suites of bytes 1.12.2, concurrent-queue 2.5.0, sharded-slab 0.1.7 and tokio 1.54.1 and
# thingbuf's whole suite (`--ignored` also its tests marked `ignore`). `--loom-own` runs
# only loom 0.7.3's own `tests/`, unchanged, on cmc and on loom, and prints per test file
# the tests both finished and their executions (minutes: builds loom's dev-dependencies).
#
# oneshot: the loom suite of 0.1.11 (which added `poll_then_drop_receiver_during_send`
# with the fix of the race it catches) against the library of 0.1.10 (must fail that
# test, and only that one, on loom), of 0.1.11 (must pass on loom) and of 0.1.12 with its
# own suite (must pass). On cmc, 0.1.10 and 0.1.11 also fail two more tests, and all
# three as uses after free (frees racing with accesses, which 0.1.12 fixed).
# thingbuf: 0.1.5 (the hang when full) and 0.1.6 (its fix), with this repository's model
# of the hang (must fail on 0.1.5 on both tools, pass on 0.1.6).
# Exit status 0 only when every expectation holds. Builds go to target/loom-suites (kept
# between runs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" # cargo prints the paths of test binaries relative to it
compare=false more=false own=false limit=300 only= tools= filter= include_ignored=
for arg in "$@"; do
    case $arg in
    --compare) compare=true ;;
    --more) more=true ;; # also the suites too slow to build or run for CI
    --loom-own) own=true ;;
    --limit=*) limit=${arg#--limit=} ;; # seconds per test before it is cut
    --only=*) only=${arg#--only=} ;;    # one suite (e.g. tokio-1.54.1), with --more
    --tool=*) tools=${arg#--tool=} ;;   # cmc or loom only
    --filter=*) filter=${arg#--filter=} ;; # libtest filters instead of each suite's own
    --ignored) include_ignored=--include-ignored ;; # also the tests a suite marks `ignore` (slow)
    *) echo "usage: $0 [--compare] [--more] [--limit=SECONDS] [--only=CRATE-VERSION] [--tool=cmc|loom] [--filter=NAMES] [--ignored] | --loom-own" >&2 && exit 2 ;;
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

# Copies crate $1 version $2 to $work/$1-$2, standalone, with the test directory $4
# (default `tests`) of version $3, and with the test module files $5 (space-separated
# paths) of this repository added to that directory (declared in its `$4.rs`). The copy
# is made beside the previous one and replaces it only if some file differs, so that an
# unchanged crate keeps its files' times and cargo does not build it again.
prepare() {
    local dir=$work/$1-$2 new=$work/$1-$2.new tests=${4:-tests} v= m
    [[ -z $only || $1-$2 == "$only" ]] || return 0
    rm -rf "$new"
    cp -r "$(registry_src "$1" "$2")" "$new"
    chmod -R u+w "$new"
    rm -rf "${new:?}/$tests"
    cp -r "$(registry_src "$1" "$3")/$tests" "$new/$tests"
    for m in ${5:-}; do
        cp "$root/$m" "$new/$tests/"
        printf '\nmod %s;\n' "$(basename "$m" .rs)" >>"$new/$tests.rs"
    done
    printf '\n[workspace]\n' >>"$new/Cargo.toml"
    # A crate published without a lock file gets one resolved now.
    [[ -f $new/Cargo.lock ]] || cargo generate-lockfile --quiet --manifest-path "$new/Cargo.toml"
    # With `self_patch=true`, a dev-dependency built on the crate itself (tokio-test on
    # tokio) gets this copy, as the crate's repository does (its workspace patches the
    # crate), so that their features unify.
    ${self_patch:-false} && v=$(awk -v c="$1" -F '"' '$0 == "name = \"" c "\"" { getline; v = $2; getline
            if ($1 == "source = " && $2 ~ /^registry/) print $2 "#" c "@" v }' "$new/Cargo.lock")
    if [[ -n $v ]]; then
        printf '[patch.crates-io]\n%s = { path = "." }\n' "$1" >>"$new/Cargo.toml"
        for v in $v; do cargo update --quiet --manifest-path "$new/Cargo.toml" -p "$v"; done
    fi
    mv "$new/Cargo.lock" "$new/Cargo.lock.registry"
    # `run` writes Cargo.lock from Cargo.lock.registry.
    if [[ -d $dir ]] && diff -rq --exclude=Cargo.lock "$new" "$dir" >/dev/null; then
        rm -rf "$new"
    else
        rm -rf "$dir"
        mv "$new" "$dir"
    fi
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
# The path of the package that stands in for loom in crate dir $1: crates/loom05 where the
# crate's lock file holds loom 0.5, crates/loom (0.7) otherwise.
loom_for() {
    if grep -A1 '^name = "loom"$' "$1/Cargo.lock.registry" | grep -q 'version = "0\.5\.'; then
        echo "$root/crates/loom05"
    else
        echo "$root/crates/loom"
    fi
}

# The outcome of one test's process (output $1, exit status $2): ok, failed, cut (the time
# limit), ignored, none (the name matched nothing) or unstable: a failure that cmc or loom
# reports as non-determinism (oneshot's recv_timeout reads std::time::Instant inside the
# model, so its runs depend on the wall clock).
outcome() {
    if [[ $2 == 124 ]]; then echo cut
    elif grep -q '^test result: ok\. 1 passed' "$1"; then echo ok
    elif grep -q '^test result: ok\. 0 passed; 0 failed; 1 ignored' "$1"; then echo ignored
    elif grep -q '^test result: ok\. 0 passed; 0 failed; 0 ignored' "$1"; then echo none
    elif grep -qE 'cmc: non-determinism|Is the model fully deterministic' "$1"; then echo unstable
    else echo failed
    fi
}

# Executions of the test whose output is $1 (cmc: the CMC_LOOM_STATS file $2; loom: its
# "Completed in N iterations" lines, or thingbuf's own "(N iterations)" count, which
# starts at 1), or "-" when the tool printed none.
executions() {
    if [[ -s $2 ]]; then awk '{ s += $1 } END { print s }' "$2"
    elif grep -q 'Completed in [0-9]* iterations' "$1"; then
        grep -oE 'Completed in [0-9]+ iterations' "$1" | awk '{ s += $3 } END { print s }'
    elif grep -qE '\([0-9]+ iterations\)' "$1"; then
        grep -oE '\([0-9]+ iterations\)' "$1" | tr -d '(' | awk '{ s += $1 - 1 } END { print s }'
    else echo -
    fi
}

# Runs crate dir $1's loom suite (cfg flags $2, cargo arguments $5, libtest filters $6) on
# `cmc` or `loom` ($3): builds its test binaries once, then runs each test in a process of
# its own, cut after $limit seconds. Writes one line per test to $work/NAME-TOOL.tests
# (name, outcome, seconds, executions), prints the suite's totals and checks that the
# tests that failed or were cut are exactly $4 (space-separated, may be empty).
run() {
    local dir=$1 cfg=$2 tool=$3 expected=$4 args=$5 filters=${filter:-${6:-}} patch=() log exe t st
    local out start end failed cut unstable passed ignored executions seconds
    [[ -z $only || $(basename "$dir") == "$only" ]] || return 0
    [[ $tool == cmc ]] && patch=(--config "patch.crates-io.loom.path=\"$(loom_for "$dir")\"")
    log=$work/$(basename "$dir")-$tool out=$work/$(basename "$dir")-$tool.out
    # The crate's own lock file, with loom moved to the patch for cmc.
    cp "$dir/Cargo.lock.registry" "$dir/Cargo.lock"
    if [[ $tool == cmc ]]; then
        cargo update --quiet --manifest-path "$dir/Cargo.toml" "${patch[@]}" -p loom
    fi
    start=$(date +%s.%N)
    if ! RUSTFLAGS="$cfg" cargo test --release --manifest-path "$dir/Cargo.toml" "${patch[@]}" \
        $args --no-run >"$log.build" 2>&1; then
        echo "$(basename "$dir") $tool: the tests do not build; log: $log.build"
        failures=$((failures + 1))
        return
    fi
    end=$(date +%s.%N)
    : >"$log.tests"
    for exe in $(sed -nE 's/^ *Executable .* \((.*)\)$/\1/p' "$log.build"); do
        # shellcheck disable=SC2086 # the filters are separate words
        for t in $("$exe" --list --format terse $filters | sed -n 's/: test$//p'); do
            rm -f "$log.stats"
            st=0
            seconds=$(date +%s.%N)
            # shellcheck disable=SC2086 # $include_ignored is empty or one flag
            CMC_LOOM_STATS=$log.stats LOOM_LOG=loom::model=info timeout "$limit" \
                "$exe" --exact "$t" --nocapture --test-threads=1 $include_ignored >"$out" 2>&1 || st=$?
            seconds=$(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $seconds }")
            echo "$t $(outcome "$out" $st) $seconds $(executions "$out" "$log.stats")" >>"$log.tests"
            cp "$out" "$log.out.$t"
        done
    done
    list() { awk -v o="$1" '$2 == o { print $1 }' "$log.tests" | sort | xargs; }
    passed=$(list ok | wc -w) ignored=$(list ignored | wc -w)
    failed=$(list failed) cut=$(list cut) unstable=$(list unstable)
    executions=$(awk '$2 == "ok" && $4 != "-" { s += $4 } END { print s + 0 }' "$log.tests")
    printf '%-22s %-4s passed %s, failed [%s], cut at %s s [%s], non-deterministic [%s], ignored %s, executions of passed %s, tests %.2f s, build %.1f s\n' \
        "$(basename "$dir")" "$tool" "$passed" "$failed" "$limit" "$cut" "$unstable" "$ignored" \
        "$executions" "$(awk '{ s += $3 } END { print s + 0 }' "$log.tests")" \
        "$(awk "BEGIN { print $end - $start }")"
    if [[ $(echo "$failed $cut" | xargs -n1 | sort | xargs) != "$expected" ]]; then
        echo "  expected failed or cut [$expected]; logs: $log.out.NAME"
        failures=$((failures + 1))
    fi
}

# Prints the tests of crate dir $1 whose outcome differs between cmc and loom.
disagreements() {
    local name
    name=$(basename "$1")
    join <(sort "$work/$name-cmc.tests") <(sort "$work/$name-loom.tests") |
        awk -v n="$name" '$2 != $5 { printf "  %s: %s: cmc %s (%s s), loom %s (%s s)\n", n, $1, $2, $3, $5, $6 }'
}

prepare oneshot 0.1.10 0.1.11
prepare oneshot 0.1.11 0.1.11
prepare oneshot 0.1.12 0.1.12
# thingbuf's loom tests are lib tests (src/**/tests). 0.1.6 fixed a hang when the buffer is
# full (a sender looping forever) and added test_full, which has no receiver and so never
# skips a slot under a held RecvRef, which the hang needs: test_full passes on 0.1.5 under
# cmc and loom alike. Both versions get 0.1.6's tests plus this repository's model of the
# hang, which holds a slot: CI runs that model only (it must fail on 0.1.5 and pass on
# 0.1.6), `--more` the whole suite.
thingbuf_hang=crates/loom05/suites/thingbuf/full_with_held_slot.rs
prepare thingbuf 0.1.5 0.1.6 src/mpsc/tests "$thingbuf_hang"
prepare thingbuf 0.1.6 0.1.6 src/mpsc/tests "$thingbuf_hang"
thingbuf_tests=$($more || echo full_with_held_slot)
if $more; then
    prepare concurrent-queue 2.5.0 2.5.0
    prepare bytes 1.12.2 1.12.2
    prepare sharded-slab 0.1.7 0.1.7
    self_patch=true prepare tokio 1.54.1 1.54.1
fi
suites=(oneshot-0.1.10 oneshot-0.1.11 oneshot-0.1.12 thingbuf-0.1.5 thingbuf-0.1.6)
$more && suites+=(concurrent-queue-2.5.0 bytes-1.12.2 sharded-slab-0.1.7 tokio-1.54.1)
for tool in ${tools:-cmc $($compare && echo loom)}; do
    oneshot=(--cfg oneshot_loom)
    uaf=$([[ $tool == cmc ]] && echo async_recv poll_then_drop_receiver_during_send recv_drop_sender_different_threads || true)
    run "$work/oneshot-0.1.10" "${oneshot[*]}" "$tool" "${uaf:-poll_then_drop_receiver_during_send}" "--features loom --test loom"
    run "$work/oneshot-0.1.11" "${oneshot[*]}" "$tool" "$uaf" "--features loom --test loom"
    run "$work/oneshot-0.1.12" "${oneshot[*]}" "$tool" "" "--features loom --test loom"
    $more && run "$work/bytes-1.12.2" "--cfg loom" "$tool" "" "--lib"
    # As each crate's CI runs its loom tests: preemption bound 2 (cmc's bounded mode;
    # bytes' CI sets none), debug assertions (thingbuf's loom profile inherits them; its
    # loom constructor needs them), thingbuf's slow models marked `ignore` (`--ignored`
    # runs them).
    export LOOM_MAX_PREEMPTIONS=2
    thingbuf=(--cfg loom --cfg ci_skip_slow_models -C debug-assertions)
    run "$work/thingbuf-0.1.5" "${thingbuf[*]}" "$tool" \
        mpsc::tests::full_with_held_slot::try_send_returns_full_while_a_recv_ref_is_held "--lib" "$thingbuf_tests"
    run "$work/thingbuf-0.1.6" "${thingbuf[*]}" "$tool" "" "--lib" "$thingbuf_tests"
    if $more; then
        run "$work/concurrent-queue-2.5.0" "--cfg loom" "$tool" "" "--features loom --test loom"
        run "$work/sharded-slab-0.1.7" "--cfg loom -C debug-assertions=on" "$tool" "" "--lib"
        # tokio's lib tests that run loom models (113 of the 148 built under its cfg).
        LOOM_MAX_BRANCHES=10000 run "$work/tokio-1.54.1" "--cfg loom --cfg tokio_unstable -C debug_assertions" \
            "$tool" "" "--lib --features full" "loom runtime::time::tests runtime::time_alt sync::watch::tests"
    fi
    unset LOOM_MAX_PREEMPTIONS
done
if $compare; then
    echo "tests whose outcome differs between cmc and loom:"
    for suite in "${suites[@]}"; do
        [[ -z $only || $suite == "$only" ]] && disagreements "$work/$suite"
    done
fi
exit $((failures > 0))
