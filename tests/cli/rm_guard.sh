# rm's operand guards: a last component '.' or '..' in any spelling, / (also by device and inode:
# a bind mount of it), the working directory and the directories above it, and symlinks (with or
# without a trailing '/') are refused with exit 2, naming the operand and the rule, before anything
# is touched — with several operands, the others too. Every case runs in the sandbox with the
# working directory deep inside, on a fresh tree with files beside and above, and checks that
# nothing in the sandbox changed. Cases that name / run in a mount namespace of their own where /
# is read-only, so that a guard that failed could not remove anything there.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
if ! sandbox 2>"$S/why"; then
	skip "rm guards: $(cat "$S/why")"
	exit 0
fi
W=$SANDBOX

# A fresh tree in the sandbox (only there), the working directory $W/a/b/c: files at every level,
# a sibling, a tree elsewhere, symlinks to that tree, to / and to an ancestor.
build() {
	cd / || exit 1
	find "$W" -mindepth 1 -maxdepth 1 -exec rm -rf --one-file-system {} +
	mkdir -p "$W/a/b/c/d/e" "$W/a/side" "$W/t/sub"
	touch "$W/top" "$W/a/f" "$W/a/b/f" "$W/a/b/c/f" "$W/a/b/c/d/f" "$W/a/b/c/d/e/f" "$W/a/side/f" "$W/t/sub/f"
	ln -s "$W/t" "$W/a/b/c/L"
	ln -s / "$W/a/b/c/R"
	ln -s "$W/a" "$W/a/b/c/up"
	cd "$W/a/b/c" || exit 1
}
listing() { find "$W" -printf '%p %y %i %n\n' | sort; }

# refused NAME RULE OPERAND...: from $W/a/b/c on a fresh tree, myriad rm OPERAND... exits 2 with
# a message naming the last operand and matching RULE (grep -E), and nothing in the sandbox
# changes; no state is left.
refused() {
	local name=$1 rule=$2 before after rc
	shift 2
	local op=${*: -1}
	build
	before=$(listing)
	"$MYRIAD" rm "$@" >/dev/null 2>"$S/err"
	rc=$?
	after=$(listing)
	expect_eq "$name: exit 2" 2 "$rc"
	grep -qF "refusing to remove '$op'" "$S/err" && grep -qE "$rule" "$S/err" &&
		ok "$name: names '$op' and the rule" || fail "$name: message: $(head -c 300 "$S/err")"
	[ "$before" = "$after" ] && ok "$name: nothing changed" ||
		fail "$name: changed: $(diff <(echo "$before") <(echo "$after") | head -4 | tr '\n' ' ')"
	expect_eq "$name: no state left" "" "$(ls "$S/state/myriad" 2>/dev/null)"
}

DOTS="last component '\.' or '\.\.'"
for op in . ./ ./. .// d/. d/./ .. ../ d/.. d/../ "$W/a/b/c/.." "$W/a/b/c/d/.." ../../../../../../../../..; do
	refused "rm '$op'" "$DOTS" "$op"
done
refused "rm --dry-run .." "$DOTS" --dry-run ..

CWD="working directory and the directories above it"
refused "rm of the working directory by its path" "$CWD" "$W/a/b/c"
refused "rm of its parent by its path" "$CWD" "$W/a/b"
refused "rm of an ancestor by its path" "$CWD" "$W/a"
refused "rm of the sandbox's root, an ancestor" "$CWD" "$W"
refused "rm of an ancestor through a symlink on the way" "$CWD" up/b

LINK="symlink"
refused "rm 'L/' (a symlink to a directory, trailing slash)" "$LINK.*never followed.*rm 'L'" L/
refused "rm 'L//'" "$LINK.*never followed" L//
refused "rm 'L' (a symlink to a directory)" "$LINK.*never followed" L
refused "rm 'up/' (a symlink to an ancestor)" "$LINK" up/

# With several operands, one refused (last) means none is touched.
refused "several operands, the last refused" "$DOTS" "$W/t" "$W/a/side" d/..
refused "several operands, one a symlink with '/'" "$LINK" "$W/a/side" L/

# / in its spellings, and a symlink to it, run where / is read-only (a private mount namespace).
on_readonly_root() {
	unshare -m --propagation private sh -c 'mount -o remount,bind,ro / && exec "$@"' sh "$@"
}
if on_readonly_root true 2>"$S/why"; then
	for op in / // /. /.. R R/ R/. "$W/a/b/c/R/"; do
		case $op in /. | /.. | R/.) rule=$DOTS ;; R | R/ | */R/) rule=$LINK ;; *) rule="it is /" ;; esac
		build
		before=$(listing)
		on_readonly_root "$MYRIAD" rm --no-state "$op" >/dev/null 2>"$S/err"
		rc=$?
		expect_eq "rm '$op' (read-only /): exit 2" 2 "$rc"
		grep -qF "refusing to remove '$op'" "$S/err" && grep -qE "$rule" "$S/err" &&
			ok "rm '$op': names it and the rule" || fail "rm '$op': message: $(head -c 300 "$S/err")"
		expect_eq "rm '$op': nothing in the sandbox changed" "$before" "$(listing)"
	done

	# / by device and inode: a read-only bind mount of / inside the sandbox, in a mount namespace of
	# its own (gone with its last process). The old binary compared realpath strings and walked it.
	build
	mkdir -p "$W/rootbind"
	# shellcheck disable=SC2016
	unshare -m --propagation private sh -c '
		mount --bind / "$1" && mount -o remount,bind,ro "$1" || exit 98
		findmnt -n -o OPTIONS -M "$1" | grep -qw ro || exit 99
		cd "$2" && exec timeout 20 "$3" rm --no-state "$1"' sh "$W/rootbind" "$W/a/b/c" "$MYRIAD" >/dev/null 2>"$S/err"
	rc=$?
	if [ $rc -ge 98 ] && [ $rc -le 99 ]; then
		skip "/ bind-mounted read-only: could not set it up ($rc)"
	else
		expect_eq "rm of a read-only bind mount of /: exit 2" 2 "$rc"
		grep -qF "refusing to remove '$W/rootbind': it is /" "$S/err" && ok "rm of a bind mount of /: refused as /" ||
			fail "rm of a bind mount of /: message: $(head -c 300 "$S/err")"
	fi
	if grep -qF " $W/rootbind " /proc/self/mounts; then
		fail "the bind mount of / outlived its namespace"
		umount "$W/rootbind"
		exit 1
	fi
else
	skip "a read-only / in a mount namespace of its own: $(cat "$S/why")"
fi

# A user who cannot search a directory above the working directory (a 0700 home, a private
# checkout) can still remove a tree of its own below it; the guard still refuses the working
# directory itself. The old binary refused everything there ("cannot read the working directory").
if command -v setpriv >/dev/null; then
	build
	mkdir -p "$W/bin" "$W/locked/w/deep/t/u"
	cp "$MYRIAD" "$W/bin/myriad" && chmod 755 "$W/bin" "$W/bin/myriad"
	touch "$W/locked/w/deep/t/u/f"
	chmod 700 "$W/locked" && chmod 777 "$W/locked/w"
	# The scratch directory above the sandbox is 0700 too: searchable for this case, then not.
	chmod 711 "$S"
	chown -R 65534:65534 "$W/locked/w/deep"
	NB=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	cd "$W/locked/w/deep" || exit 1
	"${NB[@]}" "$W/bin/myriad" rm --no-state ../deep >/dev/null 2>"$S/err"
	expect_eq "unsearchable ancestor: rm of the working directory by ../NAME is still refused" \
		"2 $CWD" "$? $(grep -oF "$CWD" "$S/err")"
	"${NB[@]}" "$W/bin/myriad" rm --no-state t >/dev/null 2>"$S/err"
	expect_eq "unsearchable ancestor: rm of a tree below the working directory works" \
		"0  $W/locked/w/deep" "$? $(cat "$S/err") $(find "$W/locked/w/deep")"
	# Two directories above that it cannot search: the ones between cannot be known, so no rm.
	chmod 700 "$S"
	mkdir t
	"${NB[@]}" "$W/bin/myriad" rm --no-state t >/dev/null 2>"$S/err"
	expect_eq "two unsearchable ancestors: rm refuses to run, says why, removes nothing" \
		"2 1 $W/locked/w/deep/t" "$? $(grep -c "cannot identify the working directory" "$S/err") $(ls -d "$W/locked/w/deep/t")"
	cd "$W/a/b/c" || exit 1
else
	skip "rm under an unsearchable ancestor: needs setpriv"
fi

# An operand whose final rmdir finds it gone is an error (the old binary took ENOENT there for
# success): faultfs makes the operand's rmdir fail with ENOENT, everything under it goes.
if [ -e /dev/fuse ]; then
	build
	"$MKTREE" "$W/fb/t" --files 100 --fanout 10
	if mount_faultfs "$W/fb" "$W/fm" --rule 'rmdir:/t:ENOENT'; then
		"$MYRIAD" rm --no-state "$W/fm/t" >/dev/null 2>"$S/err"
		expect_eq "operand's rmdir fails with ENOENT: exit 1" 1 $?
		grep -qF "$W/fm/t: rmdir: No such file or directory" "$S/err" && ok "operand's rmdir ENOENT: reported" ||
			fail "operand's rmdir ENOENT: stderr: $(head -c 300 "$S/err")"
		expect_eq "operand's rmdir ENOENT: the rest is removed" "$W/fb/t" "$(find "$W/fb/t")"
	else
		fail "faultfs did not mount"
	fi
else
	skip "faultfs needs /dev/fuse"
fi
