# copy --delete, all in a tmpfs of its own: extra entries go (a symlink to / among them, never
# followed); a mount in DST (tmpfs or bind mount, with and without --xdev) is never entered nor
# removed, but reported (exit 1); a DST chain 1,500 deep goes without a crash (1 and 16 workers);
# --max-delete N deletes exactly N entries and exits 1; --delete from an empty SRC into a non-empty
# DST is refused unless --max-delete is given; SRC and DST are compared by identity, so a bind-mount
# alias cannot make DST inside SRC or SRC inside DST (exit 2, nothing changed).
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
if ! sandbox 512m 2>"$S/sandbox.err"; then
	skip "every --delete case: $(cat "$S/sandbox.err")"
	exit 0
fi
W=$PWD

# entries DIR: how many entries lie under DIR (not counting DIR).
entries() { find "$1" -mindepth 1 -printf x 2>/dev/null | wc -c; }

# bind_mount FROM DIR / tmpfs_mount DIR: mount, and unmount at exit (registered at once).
bind_mount() {
	mount --bind "$1" "$2" || return 1
	on_exit "umount '$2' || umount -l '$2'"
}
tmpfs_mount() {
	mount -t tmpfs -o size=16m myriad-test "$1" || return 1
	on_exit "umount '$1' || umount -l '$1'"
}

# --- The extra entries of DST go, and nothing else (the old copy.sh cases). ---
make_hostile_tree "$W/hsrc"
"$MYRIAD" copy --no-state hsrc hdst >/dev/null 2>&1
mkdir -p hdst/extradir/x/y hdst/sub/extrasub
touch hdst/extra hdst/extradir/x/y/f hdst/sub/extrasub/g
ln -s / hdst/extralink
ln -s "$W/hsrc" hdst/sub/extra-to-src
"$MYRIAD" copy --no-state --delete --json "$S/h.json" hsrc hdst >/dev/null 2>"$S/err"
expect_eq "--delete: exit 0" 0 $?
same_tree hsrc hdst && ok "--delete: the extra entries are gone, the trees identical" || fail "--delete: trees differ"
expect_eq "--delete: a symlink to SRC is removed, not followed" "yes" "$([ -f hsrc/file ] && echo yes)"
expect_eq "--delete: every entry removed is counted (5 files and links, 4 directories)" 9 \
	"$(json_num "$S/h.json" deleted)"
mkdir -p outer/in
"$MYRIAD" copy --no-state --delete outer/in outer 2>/dev/null
expect_eq "SRC inside DST with --delete: exit 2, SRC still there" "2 yes" "$? $([ -e outer/in ] && echo yes || echo no)"
rm -rf hsrc hdst outer

# --- Mounts in DST: never entered, never removed, reported. ---
for xdev in "" --xdev; do
	name="mounts in DST${xdev:+ with $xdev}"
	M=$W/m${xdev:+x}
	mkdir -p "$M/src/matched" "$M/src/keep" "$M/bindsrc" "$M/dst/tmpm" "$M/dst/bindm" "$M/dst/deep/a/b/m" \
		"$M/dst/matched" "$M/dst/mw"
	echo keep >"$M/src/keep/f"
	echo new >"$M/src/matched/new"
	echo new >"$M/src/mw" # a file where DST has a mount point: making way must not empty it
	echo precious >"$M/bindsrc/precious"
	touch "$M/dst/deep/gone" "$M/dst/deep/a/gone2"
	if ! { tmpfs_mount "$M/dst/tmpm" && bind_mount "$M/bindsrc" "$M/dst/bindm" && tmpfs_mount "$M/dst/deep/a/b/m" &&
		tmpfs_mount "$M/dst/matched" && tmpfs_mount "$M/dst/mw"; }; then
		skip "$name: cannot mount"
		continue
	fi
	for d in tmpm deep/a/b/m matched mw; do echo precious >"$M/dst/$d/precious"; done
	"$MYRIAD" copy --no-state --delete $xdev "$M/src" "$M/dst" >/dev/null 2>"$S/err"
	expect_eq "$name: exit 1 (DST cannot equal SRC)" 1 $?
	left=$(for d in tmpm bindm deep/a/b/m matched mw; do cat "$M/dst/$d/precious" 2>/dev/null || echo LOST; done | xargs)
	expect_eq "$name: every mount's contents intact" "precious precious precious precious precious" "$left"
	expect_eq "$name: the source of the bind mount intact" precious "$(cat "$M/bindsrc/precious" 2>/dev/null)"
	n=0
	for d in tmpm bindm deep/a/b/m matched mw; do
		grep -q "mount point left alone: $M/dst/$d " "$S/err" && n=$((n + 1))
	done
	expect_eq "$name: each of the 5 mount points reported once" "5 5" "$n $(grep -c 'mount point left alone' "$S/err")"
	expect_eq "$name: what is around them deleted, their parents kept" "no no yes" \
		"$([ -e "$M/dst/deep/gone" ] && echo yes || echo no) $([ -e "$M/dst/deep/a/gone2" ] && echo yes || echo no) $(
			[ -d "$M/dst/deep/a/b" ] && echo yes || echo no)"
	expect_eq "$name: a mount matched by SRC is copied into" new "$(cat "$M/dst/matched/new" 2>/dev/null)"
	expect_eq "$name: SRC's other files copied" keep "$(cat "$M/dst/keep/f" 2>/dev/null)"
done

# --- A DST chain 1,500 deep (paths past PATH_MAX): removed without recursing on the C stack. ---
mkdir -p csrc
echo a >csrc/a
for j in 1 16; do
	mkdir -p cdst
	(cd cdst && perl -e 'for (1 .. 1500) { mkdir "chain" or die; chdir "chain" or die } open(my $f, ">", "bottom") or die')
	"$MYRIAD" copy --no-state --delete -j "$j" --json "$S/chain.json" csrc cdst >/dev/null 2>"$S/err"
	rc=$?
	expect_eq "chain 1,500 deep, -j $j: exit 0, gone, 1,501 entries counted" "0 no 1501" \
		"$rc $([ -e cdst/chain ] && echo yes || echo no) $(json_num "$S/chain.json" deleted)"
	[ $rc -ne 0 ] && head -3 "$S/err"
	rm -rf cdst
done

# --- --max-delete N: exactly N deletions, then none; the copy goes on; exit 1. ---
mkdir -p msrc mdst
echo keep >msrc/keep
echo fresh >msrc/fresh
for d in x1 x2 x3; do
	mkdir -p "mdst/$d/sub"
	for i in $(seq 10); do echo "$i" >"mdst/$d/f$i" && echo "$i" >"mdst/$d/sub/g$i"; done
done
before=$(entries mdst)
"$MYRIAD" copy --no-state --delete --max-delete 7 -j 4 --json "$S/md.json" msrc mdst >/dev/null 2>"$S/err"
expect_eq "--max-delete 7: exit 1" 1 $?
# (msrc's two files were copied: 2 more entries.)
expect_eq "--max-delete 7: exactly 7 entries deleted" 7 "$((before + 2 - $(entries mdst)))"
expect_eq "--max-delete 7: the summary counts 7 and says it stopped deleting" "7 true" \
	"$(json_num "$S/md.json" deleted) $(grep -o '"max_delete_reached":[a-z]*' "$S/md.json" | cut -d: -f2)"
grep -q -- "--max-delete 7 reached" "$S/err" && ok "--max-delete 7: said on stderr" || fail "--max-delete: $(head -2 "$S/err")"
expect_eq "--max-delete 7: the copy went on" fresh "$(cat mdst/fresh 2>/dev/null)"
"$MYRIAD" copy --no-state --delete --max-delete 0 msrc mdst >/dev/null 2>&1
expect_eq "--max-delete 0: exit 1, nothing deleted" "1 $((before + 2 - 7))" "$? $(entries mdst)"
"$MYRIAD" copy --no-state --delete msrc mdst >/dev/null 2>&1
expect_eq "then without the limit: exit 0, only SRC's two files left" "0 2" "$? $(entries mdst)"
rm -rf msrc mdst

# --- --delete from an empty SRC into a non-empty DST: refused unless --max-delete is given. ---
mkdir -p esrc edst/d
touch edst/f1 edst/d/f2
"$MYRIAD" copy --no-state --delete esrc edst >/dev/null 2>"$S/err"
expect_eq "empty SRC, --delete: exit 2, nothing deleted" "2 3" "$? $(entries edst)"
grep -q "esrc' is empty.*--max-delete" "$S/err" && ok "empty SRC: the refusal names SRC and tells how to go ahead" ||
	fail "empty SRC: $(cat "$S/err")"
"$MYRIAD" copy --no-state --delete --max-delete 100 esrc edst >/dev/null 2>"$S/err"
expect_eq "empty SRC, --delete --max-delete 100: exit 0, DST emptied" "0 0" "$? $(entries edst)"
grep -q "warning: SRC .* is empty" "$S/err" && ok "empty SRC with --max-delete: warned before deleting" ||
	fail "empty SRC warning: $(cat "$S/err")"
rm -rf esrc edst

# --- Overlap through a bind-mount alias: exit 2, nothing changed. (In a small tmpfs of its own:
# the copy that nested itself filled its disk.) ---
A=$W/alias
mkdir -p "$A"
if tmpfs_mount "$A"; then
	mkdir -p "$A/d/s/in" "$A/d/other" "$A/alias-s" "$A/alias-d"
	echo s >"$A/d/s/in/f"
	echo o >"$A/d/other/g"
	if bind_mount "$A/d/s" "$A/alias-s" && bind_mount "$A/d" "$A/alias-d"; then
		sum=$(tree_digest "$A/d")
		timeout 30 "$MYRIAD" copy --no-state --delete "$A/alias-s" "$A/d" >/dev/null 2>"$S/err"
		expect_eq "copy --delete ALIAS-OF-d/s d: exit 2" 2 $?
		expect_eq "copy --delete ALIAS-OF-d/s d: nothing changed" "$sum" "$(tree_digest "$A/d")"
		grep -q "SRC .* is inside DST" "$S/err" && ok "copy --delete ALIAS-OF-d/s d: says SRC is inside DST" ||
			fail "alias: $(cat "$S/err")"
		timeout 30 "$MYRIAD" copy --no-state "$A/d" "$A/alias-d/sub" >/dev/null 2>"$S/err"
		expect_eq "copy d ALIAS-OF-d/sub: exit 2, nothing made" "2 no" "$? $([ -e "$A/d/sub" ] && echo yes || echo no)"
		timeout 30 "$MYRIAD" copy --no-state "$A/d" "$A/alias-d/s/new" >/dev/null 2>&1
		expect_eq "copy d ALIAS-OF-d/s/new: exit 2, nothing made" "2 no" "$? $([ -e "$A/d/s/new" ] && echo yes || echo no)"
		timeout 30 "$MYRIAD" copy --no-state "$A/alias-d" "$A/d" >/dev/null 2>&1
		expect_eq "copy ALIAS-OF-d d: exit 2 (the same directory)" 2 $?
		expect_eq "aliases: d unchanged after all" "$sum" "$(tree_digest "$A/d")"
	else
		skip "bind-mount aliases: cannot bind mount"
	fi
else
	skip "bind-mount aliases: cannot mount a tmpfs"
fi

# --- --exclude NAME/: directories of that name only, in SRC and among DST's extras. ---
mkdir -p xsrc/a/keep/in xsrc/b xsrc/e xsrc/f xdst/e/keep/in xdst/f
touch xsrc/a/keep/in/f xsrc/b/keep xdst/e/keep/in/g xdst/f/keep
"$MYRIAD" copy --no-state --delete --exclude keep/ xsrc xdst >/dev/null 2>"$S/err"
expect_eq "copy --delete --exclude keep/: the file keep copied, the directory not; DST's directory keep kept, its file keep deleted" \
	"0 xdst xdst/a xdst/b xdst/b/keep xdst/e xdst/e/keep xdst/e/keep/in xdst/e/keep/in/g xdst/f" \
	"$? $(find xdst | sort | tr '\n' ' ' | sed 's/ $//')"
# Excluded names inside an extra DST directory stay, with the directories above them (rsync's
# --delete keeps them too); the rest of it goes, and the dry run counts the same. Where SRC has a
# file in that directory's place, the file cannot be made: said, exit 1.
mkdir -p xdst/gone/deep/er xdst/gone/plain
touch xdst/gone/deep/er/notes.log xdst/gone/deep/er/junk xdst/gone/plain/junk2 xdst/gone/junk3
"$MYRIAD" copy --no-state --dry-run --delete --exclude '*.log' --exclude keep/ --json "$S/xd.json" xsrc xdst >/dev/null 2>&1
"$MYRIAD" copy --no-state --delete --exclude '*.log' --exclude keep/ --json "$S/xr.json" xsrc xdst >/dev/null 2>"$S/err"
expect_eq "copy --delete --exclude '*.log': an extra directory goes but its excluded file and the directories above it; exit 0; the dry run counted the same" \
	"0 xdst/gone xdst/gone/deep xdst/gone/deep/er xdst/gone/deep/er/notes.log 4 4" \
	"$? $(find xdst/gone | sort | tr '\n' ' ' | sed 's/ $//') $(json_num "$S/xr.json" deleted) $(json_num "$S/xd.json" deleted)"
echo f >xsrc/gone
"$MYRIAD" copy --no-state --delete --exclude '*.log' --exclude keep/ xsrc xdst >/dev/null 2>"$S/err"
expect_eq "copy --delete: SRC's file where DST keeps a directory for an excluded name in it: exit 1, said, the excluded file kept" \
	"1 1 yes" "$? $(grep -c 'xdst/gone' "$S/err") $([ -f xdst/gone/deep/er/notes.log ] && echo yes)"
rm -f xsrc/gone
touch xdst/f/keep
"$MYRIAD" copy --no-state --delete --exclude f/keep xsrc xdst >/dev/null 2>"$S/err"
expect_eq "copy --delete --exclude f/keep: refused (exit 2), DST untouched" "2 yes" \
	"$? $([ -e xdst/f/keep ] && echo yes || echo no)"
