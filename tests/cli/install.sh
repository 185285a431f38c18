# Installing myriad as any tool of its kind: `make install` into a scratch DESTDIR honours PREFIX
# (binary, every man page, the bash completion), the installed binary runs (its version is
# VERSION; walk_basic.sh passes with it), man finds its pages there, bash-completion's loader finds
# the completion and it offers every subcommand and a command's options from the binary's own
# --help; `make uninstall` takes everything away again. The Debian package (dpkg-buildpackage with
# debhelper, in a copy of the source) holds the same files, and its binary runs.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
cd "$TOP" || exit 1
version=$(cat VERSION)

D=$S/dest
make -s install DESTDIR="$D" PREFIX=/usr >"$S/make.out" 2>&1
expect_eq "make install DESTDIR PREFIX=/usr: exit 0" 0 $?
expect_eq "the installed binary runs and says VERSION" "myriad $version" "$("$D/usr/bin/myriad" --version 2>&1 | head -1)"
pages=$(cd docs && ls ./*.1 | sed 's|^\./||' | sort | tr '\n' ' ')
expect_eq "every man page installed" "$pages" "$(cd "$D/usr/share/man/man1" && ls | sort | tr '\n' ' ')"
MANPATH=$D/usr/share/man man -w myriad-rm >"$S/manw" 2>&1
expect_eq "man finds myriad-rm in the installed tree" "$D/usr/share/man/man1/myriad-rm.1" "$(cat "$S/manw")"

# The completion, as bash-completion loads it on demand from the installed tree.
if [ -f /usr/share/bash-completion/bash_completion ]; then
	got=$(PATH=$D/usr/bin:$PATH XDG_DATA_DIRS=$D/usr/share bash -c '
		. /usr/share/bash-completion/bash_completion
		_comp_load myriad 2>/dev/null || __load_completion myriad 2>/dev/null || _completion_loader myriad
		complete -p myriad | grep -q _myriad || exit 1
		COMP_WORDS=(myriad ""); COMP_CWORD=1; _myriad myriad; echo "${COMPREPLY[*]}"
		COMP_WORDS=(myriad rm --dr); COMP_CWORD=2; _myriad myriad; echo "${COMPREPLY[*]}"
		COMP_WORDS=(myriad find . -ina); COMP_CWORD=3; _myriad myriad; echo "${COMPREPLY[*]}"' 2>&1)
	cmds=$("$D/usr/bin/myriad" --help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' | tr '\n' ' ')
	expect_eq "completion: loaded from the install, every subcommand, rm's --dry-run, find's -iname" \
		"${cmds}--help --version|--dry-run|-iname" "$(echo "$got" | tr '\n' '|' | sed 's/|$//')"
else
	skip "completion through bash-completion's loader: bash-completion not installed"
fi

# The installed binary does the real work: a whole CLI script with it.
out=$(MYRIAD=$D/usr/bin/myriad bash tests/cli/walk_basic.sh 2>&1)
nfail=$(grep -c '^FAIL' <<<"$out")
npass=$(grep -c '^PASS' <<<"$out")
[ "$nfail" = 0 ] && [ "$npass" -gt 0 ] && ok "walk_basic.sh with the installed binary: $npass passed" ||
	fail "walk_basic.sh with the installed binary: $nfail failed: $(grep '^FAIL' <<<"$out" | head -3)"

make -s uninstall DESTDIR="$D" PREFIX=/usr >/dev/null 2>&1
expect_eq "make uninstall leaves no file" "" "$(find "$D" -type f -o -type l)"

make -s install DESTDIR="$D" PREFIX=/opt/myriad >/dev/null 2>&1
expect_eq "PREFIX=/opt/myriad: everything under it" "yes yes yes" \
	"$([ -x "$D/opt/myriad/bin/myriad" ] && echo yes) $([ -f "$D/opt/myriad/share/man/man1/myriad.1" ] && echo yes) \
$([ -f "$D/opt/myriad/share/bash-completion/completions/myriad" ] && echo yes)"

# The Debian package, built with the distribution's tools from a copy of the source.
if ! command -v dpkg-buildpackage >/dev/null || ! dpkg-query -W debhelper >/dev/null 2>&1; then
	skip "Debian package: dpkg-buildpackage or debhelper not installed"
	exit 0
fi
expect_eq "debian/changelog's version is VERSION" "$version" "$(dpkg-parsechangelog -S Version)"
mkdir -p "$S/pkg/src"
git ls-files -co --exclude-standard | grep -v '^build/' | tar -cf - -T - | tar -xf - -C "$S/pkg/src"
(cd "$S/pkg/src" && dpkg-buildpackage -us -uc -b) >"$S/pkg.log" 2>&1
rc=$?
deb=$(ls "$S"/pkg/myriad_"$version"_*.deb 2>/dev/null | head -1)
expect_eq "dpkg-buildpackage -b: exit 0, a .deb" "0 yes" "$rc $([ -n "$deb" ] && echo yes)"
[ -n "$deb" ] || { tail -20 "$S/pkg.log" >&2; exit 0; }
want=$( (cd "$D/opt/myriad" && find . -type f -o -type l) | sed 's|^\./||' | sort | tr '\n' ' ')
got=$(dpkg-deb -c "$deb" | awk '{print $6}' | grep -E '^\./usr/(bin|share/man|share/bash-completion)/' |
	grep -v '/$' | sed -e 's|^\./usr/||' -e 's|\.gz$||' | sort | tr '\n' ' ')
# (myriad-mpi is packaged only when built: the package builds the plain binary)
want=$(tr ' ' '\n' <<<"$want" | grep -v 'myriad-mpi$' | grep -v '^$' | tr '\n' ' ')
expect_eq "the package holds what make install installs" "$want" \
	"$(tr ' ' '\n' <<<"$got" | grep -v 'myriad-mpi$' | grep -v '^$' | tr '\n' ' ')"
dpkg-deb -x "$deb" "$S/pkg/root"
expect_eq "the packaged binary runs" "myriad $version" "$("$S/pkg/root/usr/bin/myriad" --version 2>&1 | head -1)"
