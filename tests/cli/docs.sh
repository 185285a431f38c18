# The docs say what the code does: every option each command's --help lists is in its man page, and
# every option its man page or README block names is one it takes; a default README states for an
# option is the one --help states; myriad(1) lists every command and every page; the man pages
# render without warnings.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
DOCS=$TOP/docs
README=$TOP/README.md
cmds=$("$MYRIAD" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
[ -n "$cmds" ] && ok "myriad --help lists the commands" || { fail "myriad --help lists no command"; exit 0; }

# Long options in a text: --name tokens (groff's \-\- unescaped first).
long_opts() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' | grep -o -- '--[a-z][a-z0-9-]*' | grep -vx -- --help | sort -u; }

# Options every command takes, described once in myriad(1).
common=$(sed -n '/^\.SH COMMON OPTIONS/,/^\.SH /p' "$DOCS/myriad.1" | long_opts)
[ -n "$common" ] || common=$(long_opts <"$DOCS/myriad.1")

for c in $cmds; do
	help=$("$MYRIAD" "$c" --help 2>&1 | long_opts)
	page=$DOCS/myriad-$c.1
	[ "$c" = report ] && page=$DOCS/myriad-lifecycle.1 # report is described with lifecycle
	if [ ! -f "$page" ]; then
		fail "$c: no man page ($page)"
		continue
	fi
	man=$(long_opts <"$page")
	missing=$(comm -23 <(echo "$help") <(printf '%s\n%s\n' "$man" "$common" | sort -u) | tr '\n' ' ')
	expect_eq "$c: every option of --help is in $(basename "$page") (or myriad.1's common options)" "" "$missing"
	if [ "$c" != report ] && [ "$c" != lifecycle ]; then
		unknown=$(comm -13 <(echo "$help") <(echo "$man") | tr '\n' ' ')
		expect_eq "$c: every option $(basename "$page") names is one it takes" "" "$unknown"
	fi
	grep -q "myriad-$c\|myriad-$(basename "$page" .1 | sed 's/myriad-//')" "$DOCS/myriad.1" &&
		ok "$c: myriad.1 refers to its page" || fail "$c: myriad.1 does not name $(basename "$page")"
done

# README's usage blocks: each starts with a line "myriad CMD ..." inside a fenced block; every
# option there must be the command's, and a "(default: ...)" it states must be --help's.
awk '/^```/ { inb = !inb; next } inb && /^myriad [a-z]+ / { cmd = $2 } inb && cmd { print cmd "\t" $0 } !inb { cmd = "" }' \
	"$README" >"$S/blocks"
for c in $(cut -f1 "$S/blocks" | sort -u); do
	help=$("$MYRIAD" "$c" --help 2>&1)
	unknown=$(comm -13 <(echo "$help" | long_opts) <(grep "^$c	" "$S/blocks" | cut -f2- | long_opts) | tr '\n' ' ')
	expect_eq "README: every option in the $c usage block is one $c takes" "" "$unknown"
	# Defaults: README's option line and the --help line of the same option, joined with their
	# continuation lines, must state the same default.
	grep "^$c	" "$S/blocks" | cut -f2- | awk '/^ *-/ { if (l) print l; l = $0; next } /^  +[^ -]/ && l { l = l " " $0; next } { if (l) print l; l = "" } END { if (l) print l }' |
		grep '(default' | while IFS= read -r line; do
		opt=$(echo "$line" | grep -o -- '--[a-z][a-z0-9-]*' | head -1)
		rd=$(echo "$line" | grep -o '(default[^)]*' | tr -s ' ')
		hl=$(echo "$help" | awk -v o="$opt" '!done && index($0, o) && /^ *-/ { l = $0; on = 1; next }
			on && !done && /^  +[^ -]/ { l = l " " $0; next } on && !done { done = 1 } END { if (on) print l }')
		hd=$(echo "$hl" | grep -o '(default[^)]*' | tr -s ' ')
		# README may state less than --help (a prefix), never something else.
		case "$hd" in
		"$rd"*) echo "PASS $T_NAME: README's default for $c $opt is --help's" ;;
		*) echo "FAIL $T_NAME: README's default for $c $opt: README [$rd], --help [$hd]" ;;
		esac
	done
done

# myriad(1) names every page there is.
for p in "$DOCS"/myriad-*.1; do
	n=$(basename "$p" .1)
	grep -q "^\.BR $n (1)" "$DOCS/myriad.1" && ok "myriad.1 SEE ALSO lists $n(1)" || fail "myriad.1 SEE ALSO lacks $n(1)"
done

# Every page renders without a groff warning, and with no raw escape left in the text.
for p in "$DOCS"/*.1; do
	w=$(groff -t -man -Tutf8 -ww -z "$p" 2>&1)
	expect_eq "$(basename "$p"): renders without warnings" "" "$w"
	raw=$(groff -t -man -Tutf8 "$p" 2>/dev/null | col -b | grep -n '\\(\|\\f\|□' | head -3)
	expect_eq "$(basename "$p"): no escape or missing glyph in the rendered text" "" "$raw"
done

# The README's two commands say "as root" (sudo may not be installed where one is root).
grep -q '^sudo scripts/' "$README" && fail "README runs scripts/ with sudo" || ok "README: the set-up commands need no sudo"

# One version everywhere: VERSION, myriad --version, every man page's header, and the newest
# CHANGELOG section (the pages and --version said 0.1.0 while CHANGELOG described 0.2.0).
version=$(cat "$TOP/VERSION")
expect_eq "myriad --version prints VERSION" "myriad $version" "$("$MYRIAD" --version)"
expect_eq "CHANGELOG's newest section is VERSION" "$version" \
	"$(grep -m1 '^## [0-9]' "$TOP/CHANGELOG.md" | awk '{print $2}')"
for p in "$DOCS"/*.1; do
	expect_eq "$(basename "$p"): its header names myriad $version" "myriad $version" \
		"$(head -1 "$p" | grep -o 'myriad [0-9][0-9.]*')"
done
