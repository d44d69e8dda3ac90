# host.bash: host-side helpers shared by tests/acceptance/*.sh and
# tests/e2e/demo.sh (sourced after tests/e2e/lib.bash, which has poll):
# lease fields, and the checks that nothing of a lease's runtime is left on
# the host (SPEC 9.3, 10.6) -- from the host, never from the journal
# alone.
js() { "$CORRAL" show "$1" --json; }
field() { js "$1" | jq -r "$2"; }
has_receipt() { js "$1" | jq -e --arg k "$2" '[.receipts[].kind] | index($k)' >/dev/null; }
no_holder() { holder_gone "$1"; }	# by the PID its receipt records
no_cgroup() { [ -z "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "lease-$1" 2>/dev/null)" ]; }
no_mount() { ! grep -qF "$1" /proc/self/mountinfo; }
no_slot() { ! grep -qlx "$1" /run/corral/uids/slot-*/owner 2>/dev/null; }
no_files() {	# no socket, workspace (or its image) or review worktree
	[ ! -e "$CORRAL_STATE_DIR/leases/$1/holder.sock" ] &&
	[ ! -e "$CORRAL_STATE_DIR/leases/$1/work" ] &&
	[ ! -e "$CORRAL_STATE_DIR/leases/$1/work.img" ] &&
	[ ! -e "$CORRAL_STATE_DIR/worktrees/$1" ]
}
no_runtime() {	# every runtime resource removed in the journal too
	jq_eq "$(js "$1")" '[.resources[] | select(.state != "removed" and
	    (.kind == "holder" or .kind == "socket" or .kind == "cgroup" or
	     .kind == "sandbox" or .kind == "workspace" or .kind == "worktree"))] | length' 0
}
# runtime_gone ID LABEL: every check of a cleaned lease, as named checks;
# then its results and history kept.
runtime_gone() {
	local i=$1 n=$2
	check "$n: cleanup confirmed" jq_eq "$(js "$i")" .cleanup confirmed
	check "$n: no holder process" poll no_holder "$i"
	check "$n: no cgroup" no_cgroup "$i"
	check "$n: no mount" no_mount "$i"
	check "$n: no uid slot" no_slot "$i"
	check "$n: no socket, workspace or worktree" no_files "$i"
	check "$n: every runtime resource removed in the journal" no_runtime "$i"
	check "$n: its receipt chain verifies" jq_eq "$(js "$i")" .receipt.verified true
	check "$n: its history is kept (events)" test "$("$CORRAL" events --json |
		jq -s --arg i "$i" '[.[] | select(.id == $i)] | length')" -gt 2
}
