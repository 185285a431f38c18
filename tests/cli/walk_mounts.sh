# Mount points inside a tree, whatever their filesystem: a bind mount of another directory of the
# same tmpfs (same st_dev: only the mount id tells) and a tmpfs mounted inside. rm leaves both
# alone with their contents and reports them (exit 1); walk --xdev lists them but does not
# descend; an operand that is itself a mount point is walked (its own mount is the reference).
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
export XDG_STATE_HOME=$S/state
if ! sandbox 2>"$S/why"; then
	skip "mount points: $(cat "$S/why")"
	exit 0
fi
X=$PWD

# bind SRC DST: bind-mount SRC on DST, unmounted at exit.
bind() { mount --bind "$1" "$2" && on_exit "umount '$2'"; }

# tree: t/{f, y/g, x/bind -> precious (17 files), x/tmp (a tmpfs holding in1), x/alias -> t/y}.
tree() {
	rm -rf "$X/t" "$X/precious"
	mkdir -p "$X/precious" "$X/t/x/bind" "$X/t/x/tmp" "$X/t/x/alias" "$X/t/y"
	for i in $(seq 17); do echo "p$i" >"$X/precious/p$i"; done
	touch "$X/t/f" "$X/t/y/g" "$X/t/x/file"
	bind "$X/precious" "$X/t/x/bind" || return 1
	mount -t tmpfs -o size=1m inner "$X/t/x/tmp" && on_exit "umount '$X/t/x/tmp'" || return 1
	touch "$X/t/x/tmp/in1"
	bind "$X/t/y" "$X/t/x/alias"
}
untree() { umount "$X/t/x/alias" "$X/t/x/tmp" "$X/t/x/bind" 2>/dev/null; }

# Operands are given relative to the sandbox's working directory: shorter messages.
if tree; then
	"$MYRIAD" walk --no-state --xdev --print t 2>/dev/null >"$S/w1"
	expect_eq "walk --xdev: exit 0" 0 $?
	expect_eq "walk --xdev: mount points listed, not descended (bind mounts of the same filesystem too)" \
		"t t/f t/x t/x/alias t/x/bind t/x/file t/x/tmp t/y t/y/g" "$(sort "$S/w1" | tr '\n' ' ' | sed 's/ $//')"
	"$MYRIAD" walk --no-state --print t 2>/dev/null | grep -c -e x/bind/ -e x/tmp/ -e x/alias/ >"$S/w2"
	expect_eq "walk without --xdev walks into every mount (17 + 1 + 1 entries)" 19 "$(cat "$S/w2")"

	"$MYRIAD" rm --no-state --errors "$S/e1" t >/dev/null 2>"$S/err"
	expect_eq "rm: mount points inside: exit 1" 1 $?
	expect_eq "rm: each mount point reported as such (bind of another dir, tmpfs, bind of a dir in the tree)" \
		"t/x/alias mount point|t/x/bind mount point|t/x/tmp mount point|" \
		"$(sed -E 's/^\{"path":"([^"]*)","problem":"([^"]*)".*/\1 \2/' "$S/e1" | sort | tr '\n' '|')"
	grep -q "mount point: t/x/bind (another filesystem or a bind mount: left alone)" "$S/err" &&
		ok "rm: the message names the bind mount and says why" || fail "rm: stderr: $(cat "$S/err")"
	expect_eq "rm: the bind mount of another directory keeps its 17 entries" 17 "$(ls t/x/bind | wc -l)"
	expect_eq "rm: the directory bound there keeps its 17 files, their data intact" "$(seq 17 | sed 's/^/p/')" \
		"$(cat $(seq 17 | sed 's|^|precious/p|') 2>/dev/null)"
	expect_eq "rm: the tmpfs inside keeps its file" "t/x/tmp/in1" "$(find t/x/tmp -type f)"
	expect_eq "rm: the directory bound inside the tree (t/y, reached through its own path) goes" "no" \
		"$([ -e t/y ] && echo yes || echo no)"
	expect_eq "rm: the mount points and their parents stay" "t t/x t/x/alias t/x/bind t/x/tmp" \
		"$(find t -maxdepth 2 | sort | tr '\n' ' ' | sed 's/ $//')"
	untree
else
	fail "could not set up the mounts"
	untree
fi

# The operand is itself a mount point: what is under it is on the operand's own mount, and goes.
mkdir -p "$X/src/sub" "$X/op"
touch "$X/src/a" "$X/src/sub/b"
if bind "$X/src" "$X/op"; then
	"$MYRIAD" rm --no-state op >/dev/null 2>"$S/err"
	rc=$?
	expect_eq "rm on a bind-mount operand: its contents go, the operand stays (busy: exit 1)" "1 op" "$rc $(find op)"
	expect_eq "rm on a bind-mount operand: says why it stays" "myriad rm: op: rmdir: Device or resource busy" \
		"$(cat "$S/err")"
	umount "$X/op"
else
	fail "bind mount failed"
fi
