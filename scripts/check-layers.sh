#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The stages of user/ depend one way: a file includes headers of its own folder and of folders
# before it in LAYERS, never after (docs/ARCHITECTURE.md). The product includes nothing of sim/.
# Run by make format-check; prints every include that breaks the order, exits 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."
LAYERS=(lib target model symbols gcu collect output app)
rank() {
	local i
	for i in "${!LAYERS[@]}"; do
		[ "${LAYERS[$i]}" = "$1" ] && { echo "$i"; return; }
	done
	echo -1
}
bad=0
while IFS= read -r f; do
	me=$(rank "$(cut -d/ -f2 <<<"$f")")
	[ "$me" -ge 0 ] || { echo "check-layers: $f is in no stage folder (${LAYERS[*]})"; bad=1; continue; }
	while IFS= read -r inc; do
		dir=${inc%%/*}
		[ "$dir" != "$inc" ] || continue # include/ and the skeletons: below every stage
		[ "$dir" != sim ] && [ "$dir" != .. ] || { echo "check-layers: $f includes $inc (sim/)"; bad=1; continue; }
		r=$(rank "$dir")
		if [ "$r" -lt 0 ]; then
			echo "check-layers: $f includes $inc: not a stage folder"
			bad=1
		elif [ "$r" -gt "$me" ]; then
			echo "check-layers: $f includes $inc: ${LAYERS[$r]} comes after $(cut -d/ -f2 <<<"$f")"
			bad=1
		fi
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done < <(git ls-files 'user/*.c' 'user/*.h')
exit $bad
