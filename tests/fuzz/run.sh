#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Run every fuzz target for a bounded time (FUZZ_SECONDS each, default 10) from its seed corpus.
# A crash, a leak or a sanitizer report fails the run; the reproducer is left in the work dir.
set -u
OUT=$(cd "${1:-build}" && pwd)/fuzz
SECONDS_EACH=${FUZZ_SECONDS:-10}
here=$(cd "$(dirname "$0")" && pwd)
fail=0 pass=0
for target in "$OUT"/fuzz_*; do
	[ -x "$target" ] || continue
	name=$(basename "$target")
	seeds=$here/corpus/${name#fuzz_}
	seeds=${seeds%_payload}
	work=$(mktemp -d /tmp/topsprof-fuzz.XXXXXX)
	cp -r "$seeds"/. "$work"/ 2>/dev/null
	# ELF seeds: the symbolizer's unit-test fixtures, built with the unit tests
	[ "$name" = fuzz_symtab ] && cp "$OUT"/../tests/fixtures/* "$work"/ 2>/dev/null
	if [ "$name" = fuzz_profile_payload ]; then
		# the seeds' payloads: the profiles decompressed
		for f in "$work"/*; do
			python3 -c "import sys, zlib; d = open(sys.argv[1], 'rb').read(); open(sys.argv[1], 'wb').write(zlib.decompress(d[32:]))" "$f" 2>/dev/null || rm -f "$f"
		done
	fi
	if (cd "$work" && "$target" -max_total_time="$SECONDS_EACH" -rss_limit_mb=1024 -timeout=5 \
		-print_final_stats=1 . >"$work/log" 2>&1); then
		pass=$((pass + 1))
		echo "PASS $name ($(sed -n "s/^stat::number_of_executed_units: *//p" "$work/log") runs)"
		rm -rf "$work"
	else
		fail=$((fail + 1))
		echo "FAIL $name: see $work/log"
		grep -E 'ERROR|SUMMARY' "$work/log" | head -n 5 | sed 's/^/    | /'
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ $fail -eq 0 ]
