# The kill -9 campaigns of tests/campaign.sh at a size CI affords: fill, verify, walk, copy and rm,
# each on 20,000 files (plus hostile names, hard links, a sparse file, xattrs...), killed 5 times
# (at start, a few ms in, at a random moment, after its work but before its state is removed,
# and while it removes it), resumed each time, then checked to be exactly right; a second run on
# live state is refused. The seed is printed: CAMPAIGN_SEED=S replays a failure. The long
# campaigns: nice -n 19 tests/campaign.sh --files 300000 --kills 20.
. "$(dirname "$0")/../lib.sh"
seed=${CAMPAIGN_SEED:-$(($(date +%s%N) % 1000000007))}
bash "$TOP/tests/campaign.sh" --files 20000 --kills 5 --seed "$seed"
rc=$?
# Its checks print their own PASS/FAIL lines; anything else is the script failing to run.
[ $rc -le 1 ] || fail "tests/campaign.sh exited with status $rc (seed $seed)"
