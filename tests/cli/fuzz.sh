# Fuzzing: build the libFuzzer targets (make fuzz: tests/fuzz/*.c against the product's sources,
# with AddressSanitizer and UndefinedBehaviorSanitizer) and run each for FUZZ_SECONDS (default
# 30) with a fixed seed on a copy of its seed corpus (tests/fuzz/corpus/TARGET). A target passes
# when nothing crashed, leaked, hit undefined behaviour, hung or broke an invariant; otherwise the
# reproducer is kept under build/fuzz-crashes/ and the first lines of the report are shown.
# Reproduce with: build/fuzz/TARGET FILE
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
SECONDS_EACH=${FUZZ_SECONDS:-30}
cc=$(command -v clang-14 || command -v clang || true)
if [ -z "$cc" ]; then
	skip "no clang: the fuzz targets need clang and libFuzzer (apt-get install clang-14 libclang-rt-14-dev)"
	exit 0
fi
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >"$S/probe.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined -o "$S/probe" "$S/probe.c" 2>"$S/probe.err"; then
	skip "$cc cannot link libFuzzer (apt-get install libclang-rt-14-dev): $(head -n 1 "$S/probe.err")"
	exit 0
fi
if ! make -s -j"$(nproc)" -C "$TOP" fuzz >"$S/build.log" 2>&1; then
	fail "make fuzz: $(tail -n 5 "$S/build.log" | tr '\n' ' ')"
	exit 0
fi
crashes=$TOP/build/fuzz-crashes
for src in "$TOP"/tests/fuzz/*.c; do
	t=$(basename "$src" .c)
	mkdir -p "$S/$t" "$S/art-$t"
	cp "$TOP/tests/fuzz/corpus/$t/"* "$S/$t/" 2>/dev/null
	timeout $((SECONDS_EACH + 120)) "$TOP/build/fuzz/$t" -max_total_time="$SECONDS_EACH" -seed=1 -timeout=10 \
		-rss_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$S/art-$t/" "$S/$t" \
		>"$S/$t.log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$S/$t.log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$S/$t.log")
	art=$(ls "$S/art-$t/" 2>/dev/null | head -n 1)
	if [ "$rc" -eq 0 ] && [ -z "$art" ]; then
		ok "$t: ${runs:-?} inputs in ${SECONDS_EACH} s (${rate:-?}/s), no crash, leak, UB or hang"
		continue
	fi
	mkdir -p "$crashes"
	if [ -n "$art" ]; then
		cp "$S/art-$t/$art" "$crashes/$t-$art"
		# The report again, with the harness's own messages (stderr was closed while fuzzing).
		report=$(timeout 60 "$TOP/build/fuzz/$t" "$crashes/$t-$art" 2>&1 |
			grep -m 6 -E 'invariant|ERROR|runtime error|SUMMARY|^    #[0-3] ' | sed 's/^/    /')
		fail "$t: exit $rc; reproducer $crashes/$t-$art (run: build/fuzz/$t FILE)"
	else
		report=$(tail -n 6 "$S/$t.log" | sed 's/^/    /')
		fail "$t: exit $rc without a reproducer"
	fi
	echo "$report"
done
