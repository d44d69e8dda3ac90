# leftovers.bash: what a `make test` run left on the host (sourced by
# scripts/test.sh, and by tests/style/leftovers_planted.sh which plants
# some). Needs LOGDIR, RUN_TMP and CORRAL_TEST_RUN; `snapshot` lists lease
# holders and tmux servers of this run (by their environment), lease
# cgroups, and mounts and loop devices under RUN_TMP; `new_leftovers`
# lists what is new since $LOGDIR/host.before and not another's: a cgroup
# under the state-<tag> of a live state directory outside RUN_TMP
# belongs to another corral on the host.

snapshot() {
	local p cmd
	{
		for p in /proc/[0-9]*; do
			cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
			echo "$cmd" | grep -qE \
			    '(^|/)corral-holder |^tmux |(^|/)tmux (-[^ ]+ )*-L ' || continue
			tr '\0' '\n' 2>/dev/null <"$p/environ" |
			    grep -qxF "CORRAL_TEST_RUN=$CORRAL_TEST_RUN" || continue
			echo "process ${p#/proc/} ${cmd:0:120}"
		done
		find /sys/fs/cgroup -mindepth 1 -maxdepth 8 -type d \
		    \( -name 'lease-*' -o -name 'corral-exec-*' \) 2>/dev/null |
		    sed 's/^/cgroup /'
		awk -v t="$RUN_TMP/" 'index($5, t) == 1 || $5 ~ /\/corral-doctor-/ {
		    print "mount " $5 }' /proc/self/mountinfo
		losetup -l -n -O NAME,BACK-FILE 2>/dev/null |
		    awk -v t="$RUN_TMP/" 'index($2, t) == 1 { print "loop " $1 }'
	} | sort -u
}
# The cgroup tags of live state directories that are not this run's.
# CORRAL_LEFTOVERS_HOST ("VIEW=PATH ...", set by make fresh-check) names
# read-only views of the host's directories, whose state directories are
# another's too: found at VIEW/x, tagged as the host's PATH/x.
others_tags() {
	local f d v
	{ {
		find /tmp /var/tmp -maxdepth 6 \( -path "$RUN_TMP" -o \
		    -path /var/tmp/corral-fresh \) -prune -o -name corral.db \
		    -print 2>/dev/null
		ls "${XDG_STATE_HOME:-$HOME/.local/state}/corral/corral.db" 2>/dev/null
	} | while read -r f; do
		d=$(realpath "$(dirname "$f")") || continue
		printf 'state-%.16s\n' "$(printf %s "$d" | sha256sum)"
	done
	for v in ${CORRAL_LEFTOVERS_HOST:-}; do
		find "${v%%=*}" -maxdepth 6 -path "${v%%=*}/corral-fresh" -prune \
		    -o -name corral.db -print 2>/dev/null | while read -r f; do
			d=$(dirname "$f")
			d=${v#*=}${d#"${v%%=*}"}
			printf 'state-%.16s\n' "$(printf %s "$d" | sha256sum)"
		done
	done
	} 2>/dev/null | sort -u
}
# What is new since before and not another's.
new_leftovers() {
	local others
	others=$(others_tags)
	snapshot | comm -13 "$LOGDIR/host.before" - |
	    if [ -n "$others" ]; then grep -vF "$others"; else cat; fi
}
