# The house kept in order (docs/design.md's map): every folder and module of src/ is named in
# the map; every #include points down the layers the map states (a file includes its own folder
# and the layers below, a command's folder only itself, cmd/cmds.h and below); every CLI script
# and unit test is named in tests/README.md; docs/adding-a-command.md is there. Each failure names
# the file and what is wrong with it.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
map=$(sed -n '/^## Architecture/,/^## /p' docs/design.md)

# The layers, as the map states them: "Layers, from the bottom: util; io, state; ...; main."
layers=$(tr '\n' ' ' <<<"$map" | sed -n 's/.*Layers, from the bottom: \([^.]*\)\..*/\1/p')
declare -A rank
r=0
IFS=';' read -ra groups <<<"$layers"
for g in "${groups[@]}"; do
	r=$((r + 1))
	IFS=',' read -ra names <<<"$g"
	for n in "${names[@]}"; do rank[$(tr -d ' ' <<<"$n")]=$r; done
done
[ "${#rank[@]}" -ge 8 ] && ok "design.md states the layers (${#rank[@]} folders)" ||
	fail "design.md's 'Layers, from the bottom:' line not found or short: '$layers'"

missing=""
for d in $(cd src && find . -mindepth 1 -type d | sed 's|^\./||' | sort); do
	grep -qE "(^|[ (])(src/)?$d/" <<<"$map" || missing="$missing src/$d/"
done
expect_eq "every src folder is in design.md's map" "" "$missing"
missing=""
for f in $(cd src && find . -name '*.[ch]' | sort); do
	m=$(basename "$f" | sed 's/\.[ch]$//')
	grep -qwE "$m" <<<"$map" || missing="$missing $f"
done
expect_eq "every src module is named in design.md's map" "" "$(tr ' ' '\n' <<<"$missing" | sort -u | tr '\n' ' ' | sed 's/^ //')"

# Includes point down.
bad=""
for f in $(cd src && find . -name '*.[ch]' | sed 's|^\./||' | sort); do
	top=${f%%/*}
	[ "$top" = "$f" ] && top=main
	sub=$(cut -d/ -f1-2 <<<"$f")
	while IFS= read -r inc; do
		itop=${inc%%/*}
		if [ "$itop" = "$top" ]; then
			# Inside cmd: a command's folder includes only itself and cmd/cmds.h; a top-level
			# command file includes no command's folder.
			if [ "$top" = cmd ] && [ "$inc" != cmd/cmds.h ]; then
				isub=$(cut -d/ -f1-2 <<<"$inc")
				if [ "$isub" != "$sub" ] && [[ $inc == */*/* || $f == */*/* ]]; then
					bad="$bad $f->$inc"
				fi
			fi
			continue
		fi
		[ -n "${rank[$itop]:-}" ] && [ -n "${rank[$top]:-}" ] && [ "${rank[$itop]}" -lt "${rank[$top]}" ] ||
			bad="$bad $f->$inc"
	done < <(sed -n 's/^#include "\([a-z_]*\/[^"]*\)".*/\1/p' "src/$f")
done
expect_eq "every include points down the layers" "" "$bad"

missing=""
for t in tests/cli/*.sh tests/unit/test_*.c; do
	n=$(basename "$t" | sed 's/\.sh$//; s/\.c$//')
	grep -qw -- "$n" tests/README.md || missing="$missing $n"
done
expect_eq "every CLI script and unit test is in tests/README.md" "" "$missing"
check "docs/adding-a-command.md is there and names the table to register in" grep -q 'src/cmd/cmds.c' docs/adding-a-command.md
