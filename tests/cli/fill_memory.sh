# Memory is flat in N: peak RSS filling (and verifying) 400k files is within 1.25x of 40k.
. "$(dirname "$0")/../lib.sh"
S=$(scratch)
[ -x /usr/bin/time ] || { skip "GNU time is not installed (scripts/deps installs it)"; exit 0; }
if is_root && mkdir -p "$S/t" && mount -t tmpfs -o size=2g,nr_inodes=1000000 tmpfs "$S/t"; then
	on_exit "umount '$S/t'"
	S=$S/t
fi
for s in 0 1k; do
	small=$(peak_rss_kib "$MYRIAD" fill --no-state -j 4 -n 40k -s $s "$S/a$s")
	large=$(peak_rss_kib "$MYRIAD" fill --no-state -j 4 -n 400k -s $s "$S/b$s")
	[ "$large" -le $((small * 125 / 100)) ] && ok "fill -s $s: peak RSS for 400k files $large KiB, within 1.25x of 40k's $small KiB" ||
		fail "fill -s $s: peak RSS for 400k files $large KiB > 1.25 x 40k's $small KiB"
	small=$(peak_rss_kib "$MYRIAD" verify --no-state -j 4 "$S/a$s")
	large=$(peak_rss_kib "$MYRIAD" verify --no-state -j 4 "$S/b$s")
	[ "$large" -le $((small * 125 / 100)) ] && ok "verify -s $s: peak RSS for 400k files $large KiB, within 1.25x of 40k's $small KiB" ||
		fail "verify -s $s: peak RSS for 400k files $large KiB > 1.25 x 40k's $small KiB"
	rm -rf "$S/a$s" "$S/b$s"
done
