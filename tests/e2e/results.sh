#!/usr/bin/env bash
# results.sh: results end to end through agents in real sandboxed (bwrap)
# leases (issue 8, SPEC 7, 10.4-10.6): hostile workspaces, each rejection
# reason of SPEC 7.2 asserted by name (quarantined, nothing materialised,
# the operator's repository unchanged); a background process swapping a
# file for a symlink during extraction; terminal escapes in a result file
# printed escaped by review and show; two leases from one base, one
# rejected, one applied, the operator's checkout and index byte-identical;
# a checked-out target refused with the merge hint; an advanced target back
# to review; an edited review worktree refused; --hunks; a tampered patch;
# checks, artifacts and binary files; a failed agent and a lost holder;
# after reject, apply and reconcile no runtime resource of any lease.
# All leases start at once; the file takes 30-50 s on a loaded 2-core host.
set -u
. "$(dirname "$0")/lib.bash"

needs_root
T0=$(date +%s)
REPO=$TMP/app
new_repo "$REPO"
mkdir -p "$REPO/src" "$REPO/d"
printf 'hello\n' >"$REPO/README"
printf 'int a;\n' >"$REPO/src/a.c"
printf 'in d\n' >"$REPO/d/f"
seq 1 40 >"$REPO/nums.txt"
git -C "$REPO" add -A && git -C "$REPO" commit -qm base
BASE=$(git -C "$REPO" rev-parse HEAD)
# The operator's policy: room for a sparse 2 GB file (RLIMIT_FSIZE), the
# result caps as shipped (1000 files, 8 MiB a file), and a 1 GiB workspace
# each (19 leases live at once must fit the free space, limits and all).
mkdir -p "$XDG_CONFIG_HOME/corral"
cat >"$XDG_CONFIG_HOME/corral/policy.ini" <<'EOF'
[limits]
wall_time = 120s
memory = 512M
file_size = 3G
disk = 1G
[result]
output_dir = out
allow_binary = true
EOF
# The operator's review-flag patterns add to the shipped ones.
printf '# mine\nbuild   *.weird\n' >"$XDG_CONFIG_HOME/corral/review-flags"
# Binary content refused by a lease's own policy (it may narrow).
printf '[result]\nallow_binary = false\n' >"$TMP/nobinary.ini"
js() { "$CORRAL" show "$1" --json; }
# agent NAME SCRIPT: start a sandboxed lease running sh -c SCRIPT in /work;
# prints its ID.
# POLICY=FILE agent ...: with that lease policy (it may only narrow).
agent() {
	(cd "$REPO" && "$CORRAL" new --sandbox bwrap --name "$1" \
		${POLICY:+--policy "$POLICY"} -- /bin/sh -c "$2")
}
# settled ID: the agent ended, its result is recorded (ready or
# quarantined) and its holder is gone.
settled() {
	local i
	"$CORRAL" wait "$1" --until done,failed,cancelled --timeout 150 >/dev/null 2>&1
	for i in $(seq 600); do
		js "$1" | jq -e '.result.status != null and ([.resources[] |
		    select((.kind=="holder" or .kind=="cgroup" or
		    .kind=="sandbox") and .state!="removed")] | length == 0)' \
		    >/dev/null && return 0
		sleep 0.25
	done
	return 1
}
tip() { git -C "$REPO" rev-parse "$1" 2>/dev/null; }
# has_reason ID REASON [PATH]: the quarantined result names REASON (at PATH).
has_reason() {
	js "$1" | jq -e --arg r "$2" --arg p "${3-}" '.result.reasons |
	    any(.reason == $r and ($p == "" or .path == $p))' >/dev/null
}
# quarantined NAME ID: status quarantined, no commit, the branch still at
# the base, nothing in the review worktree but the base.
quarantined() {
	local j
	j=$(js "$2")
	check "$1: quarantined, no commit" jq_eq "$j" \
		'"\(.result.status) \(.result.commit)"' "quarantined null"
	check "$1: the lease failed with result_invalid (SPEC 5.1)" jq_eq "$j" \
		'"\(.lease_state) \(.failed_reason)"' "failed result_invalid"
	expect_rc 3 "$1: wait --until result_ready ends with 3" \
		"$CORRAL" wait "$2" --until result_ready --timeout 5
	check "$1: corral/$2 has no new commit" test "$(tip "corral/$2")" = "$BASE"
}
hash_checkout() {
	(cd "$REPO" && find . -path ./.git -prune -o -print0 | LC_ALL=C sort -z |
		xargs -0 stat -c '%n %a %s' &&
		find . -path ./.git -prune -o -type f -print0 | LC_ALL=C sort -z |
		xargs -0 sha256sum && sha256sum .git/index .git/HEAD &&
		git for-each-ref --format='%(refname) %(objectname)' refs/heads/main)
}
BEFORE=$(hash_checkout)

# The holders' peak RSS (VmHWM) while they extract 100,000 files and a
# sparse 2 GB file (SPEC 7.1: caps apply while streaming).
hwm() { # PID OUT: the last VmHWM seen (kB) until PID is gone
	local v=0 x
	while x=$(awk '/^VmHWM/ {print $2}' /proc/$1/status 2>/dev/null) && [ -n "$x" ]; do
		v=$x; echo "$v" >"$2"; sleep 0.05
	done
}
watch_hwm() { # ID: sample its holder in the background
	local p
	p=$(js "$1" | jq -r .holder_pid)
	[ "$p" != null ] && hwm "$p" "$TMP/hwm.$1" &
}

# --- start every lease at once (they run concurrently) ----------------------------
# shapes: one finding per entry, each reported separately.
SHAPES=$(POLICY=$TMP/nobinary.ini agent shapes '
ln -s /etc/passwd link
mkdir -p /tmp/out && ln -s /tmp/out sub && echo pwned >sub/evil
rm -rf d && ln -s src d
mkfifo pipe
echo x >f000 && chmod 000 f000
echo x >g777 && chmod 777 g777
python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")"
mkdir .GIT && echo x >.GIT/config
mkdir -p "x/.git " && echo x >"x/.git /config"
mkdir -p y/git~1 && echo x >y/git~1/HEAD
mkdir -p z/.git && echo x >z/.git/config
git init -q vendor/lib
printf "a\000b" >blob.bin
{ head -c 9000 /dev/zero | tr "\000" a; printf "\000"; } >late.txt
touch "$(printf "esc\033]0;t\007")" "$(printf "nl\nname")" -- -rf "$(printf "bad\377")"
echo fine >src/ok.c')
MANY=$(agent many 'mkdir many && cd many && seq 100000 | xargs touch')
watch_hwm "$MANY"
SPARSE=$(agent sparse 'sleep 2; truncate -s 2G huge.img && echo small >small.txt')
watch_hwm "$SPARSE"
# A background process swapping a file for a symlink, left running when
# the agent exits (the holder stops every process before extraction). The
# agent exits once the host has seen its processes (go, or a minute).
SWAP=$(agent swapper '(while :; do ln -sf /etc/passwd f.tmp && mv -f f.tmp f;
	echo x >g.tmp && mv -f g.tmp f; done) >/dev/null 2>&1 &
i=0; until [ -e go ] || [ $i -ge 600 ]; do sleep 0.1; i=$((i + 1)); done
rm -f go; exit 0')
# The workspace changing during extraction, from the host: a loop swapping
# a file for a symlink and back until the lease has settled.
RACE=$(agent race 'echo start >f; sleep 2; exit 0')
(w=$CORRAL_STATE_DIR/leases/$RACE/work
 while [ ! -e "$TMP/race.stop" ]; do
	ln -sfn /etc/passwd "$w/f.tmp" && mv -Tf "$w/f.tmp" "$w/f"
	head -c 1000 /dev/zero | tr '\0' A >"$w/g.tmp" && mv -Tf "$w/g.tmp" "$w/f"
 done) 2>/dev/null &
RACER=$!
# OSC 52 (clipboard) and OSC 0 (title) sequences in a result file.
ESCS=$(agent escapes "printf 'clip \\033]52;c;aGk=\\007 title \\033]0;pwned\\007\\n' >notes.txt")
ALPHA=$(agent alpha 'echo alpha >>README')
# Declared checks (SPEC 7.3): one on an input the agent did not touch, one
# on a file it wrote (not independent).
printf '[checks]\nreadme = grep -q hello README\nb = cat src/b.c\n' >"$TMP/checks.ini"
BETA=$(POLICY=$TMP/checks.ini agent beta 'echo "int b;" >src/b.c')
GAMMA=$(agent gamma 'echo gamma >c.txt')
DELTA=$(agent delta 'echo delta >e.txt')
HUNKS=$(agent hunks 'sed -i "1s/.*/ONE/; 40s/.*/FORTY/" nums.txt')
CONFL=$(agent conflict 'sed -i "5s/.*/five/" nums.txt')
TAMPER=$(agent tamper 'echo t >t.txt')
# Binary allowed by the operator's policy: a GIT binary patch, also for a
# NUL past the 8000 bytes git looks at.
BIN=$(agent bin 'head -c 20000 /dev/urandom >rnd.bin
{ head -c 9000 /dev/zero | tr "\000" a; printf "\000"; } >late.txt')
OWNER=$(agent owner 'echo owner >o.txt; mkdir out; echo "3 tests passed" >out/report.txt')
# An agent that fails after writing, and one whose holder dies (SPEC 9.2):
# their work is kept in quarantine for inspection, never materialised.
FAILS=$(agent fails 'echo half >half.txt; exit 1')
LOST=$(agent lost 'echo lost >lost.txt; sleep 1000')
# Names that are not what they show (bidi, zero-width) are refused; names
# one file on macOS and Windows (case, NFC/NFD) are flagged for review.
NAMES=$(agent names 'echo a >"$(printf "evil\342\200\256txt.sh")"
echo b >"$(printf "zero\342\200\213width")"; echo c >"$(printf "bidi\342\201\246x")"')
TWINS=$(agent twins 'echo t >readme; echo n >"$(printf "caf\303\251.txt")"
echo d >"$(printf "cafe\314\201.txt")"; echo u >plain.txt
echo w >gen.weird; echo "[MASTER]" >.pylintrc; echo "{}" >turbo.json')
ALL="$FAILS $LOST $SHAPES $MANY $SPARSE $SWAP $RACE $ESCS $ALPHA $BETA $GAMMA $DELTA $HUNKS $CONFL $TAMPER $OWNER $BIN $NAMES $TWINS"
check "every lease started" test "$(echo $ALL | wc -w)" = 19
# The swapper's processes by PID ("PID START" a line): its sandbox's tree
# under the holder's child, once the loop has swapped f; then it may exit.
for _ in $(seq 300); do [ -e "$CORRAL_STATE_DIR/leases/$SWAP/work/f" ] && break; sleep 0.1; done
SWAP_PROCS=$(proc_tree "$("$CORRAL" ls --json | jq -r ".[] | select(.id == \"$SWAP\") | .child_pid")")
touch "$CORRAL_STATE_DIR/leases/$SWAP/work/go"
check "swapper: its loop runs in its sandbox (bwrap, init, the agent, the loop)" \
	test "$(grep -c . <<<"$SWAP_PROCS")" -ge 5
settled "$RACE" || fail "race did not settle"
for _ in $(seq 100); do [ -s "$CORRAL_STATE_DIR/leases/$LOST/work/lost.txt" ] && break; sleep 0.1; done
kill -9 "$(js "$LOST" | jq -r .holder_pid)"
"$CORRAL" reconcile >/dev/null 2>&1
touch "$TMP/race.stop"	# the host loop costs CPU: stop it at once
for id in $ALL; do settled $id || fail "$id did not settle"; done
echo "# all settled after $(( $(date +%s) - T0 ))s"

# --- one finding per rejection reason (SPEC 7.2) ------------------------------------
quarantined shapes "$SHAPES"
for rp in "symlink link" "symlink sub" "symlink d" "fifo pipe" \
    "bad_mode f000" "bad_mode g777" "socket sock" "git_path .GIT" "git_path x/.git " \
    "git_path y/git~1" "gitlink z" "gitlink vendor/lib" "binary blob.bin" "binary late.txt" \
    "leading_dash -rf"; do
	check "shapes: ${rp%% *} (${rp#* })" has_reason "$SHAPES" "${rp%% *}" "${rp#* }"
done
check "shapes: control_char (ESC in a name)" has_reason "$SHAPES" control_char "$(printf 'esc\033]0;t\007')"
check "shapes: newline in a name" has_reason "$SHAPES" newline "$(printf 'nl\nname')"
check "shapes: invalid_utf8" has_reason "$SHAPES" invalid_utf8
check "shapes: the snapshot never reached the operator's repository" bash -c \
	"! git -C '$REPO' cat-file -e $(js "$SHAPES" | jq -r .result.snapshot_tree)"
quarantined names "$NAMES"
check "names: invisible_char (RLO)" has_reason "$NAMES" invisible_char "$(printf 'evil\342\200\256txt.sh')"
check "names: invisible_char (ZWSP)" has_reason "$NAMES" invisible_char "$(printf 'zero\342\200\213width')"
check "names: invisible_char (LRI)" has_reason "$NAMES" invisible_char "$(printf 'bidi\342\201\246x')"
# has_flag ID FLAG PATH: the result flags PATH with FLAG.
has_flag() {
	js "$1" | jq -e --arg f "$2" --arg p "$3" '.result.flags |
	    any(.path == $p and (.flags | index($f)))' >/dev/null
}
check "twins: result_ready (flagged, not refused)" jq_eq "$(js "$TWINS")" \
	'"\(.lease_state) \(.result.status)"' "result_ready ready"
check "twins: readme (README in the base) flagged name_twin" has_flag "$TWINS" name_twin readme
check "twins: NFC cafe flagged name_twin" has_flag "$TWINS" name_twin "$(printf 'caf\303\251.txt')"
check "twins: NFD cafe flagged name_twin" has_flag "$TWINS" name_twin "$(printf 'cafe\314\201.txt')"
check "twins: gen.weird flagged build (the operator's pattern)" has_flag "$TWINS" build gen.weird
check "twins: .pylintrc flagged build (its init-hook runs)" has_flag "$TWINS" build .pylintrc
check "twins: turbo.json flagged build" has_flag "$TWINS" build turbo.json
# A bad line in the operator's review-flags: corral new names file and line.
mv "$XDG_CONFIG_HOME/corral/review-flags" "$TMP/review-flags.good"
printf 'build x\nbuidl y\n' >"$XDG_CONFIG_HOME/corral/review-flags"
out=$(cd "$REPO" && "$CORRAL" new --sandbox bwrap --name badflags -- /bin/true 2>&1); rc=$?
check "bad review-flags: corral new refuses (exit $rc)" test "$rc" -eq 1
check "... naming the file and line" grep -q "policy_invalid: review flags: $XDG_CONFIG_HOME/corral/review-flags:2: unknown flag" <<<"$out"
check "... nothing started" jq_eq "$("$CORRAL" ls --all --json)" \
	'[.[] | select(.name == "badflags") | .lease_state] | join(",")' failed
mv "$TMP/review-flags.good" "$XDG_CONFIG_HOME/corral/review-flags"
check "twins: plain.txt not flagged" bash -c "! '$CORRAL' show '$TWINS' --json |
	jq -e '.result.flags | any(.path == \"plain.txt\")' >/dev/null"
quarantined many "$MANY"
check "100,000 files: too_many_files" has_reason "$MANY" too_many_files
out=$("$CORRAL" review "$MANY" 2>&1); rc=$?
check "100,000 files: review works (exit $rc)" test "$rc" -eq 0
check "... and names too_many_files" grep -q too_many_files <<<"$out"
quarantined sparse "$SPARSE"
check "a sparse 2 GB file: file_too_large" has_reason "$SPARSE" file_too_large huge.img
for id in $MANY $SPARSE; do
	k=$(cat "$TMP/hwm.$id" 2>/dev/null || echo 0)
	echo "# holder of $id: VmHWM ${k} kB"
	check "$(js $id | jq -r .name): the holder's peak RSS stays under 96 MiB (${k} kB)" \
		test "$k" -gt 0 -a "$k" -lt 98304
done
out=$("$CORRAL" apply "$SHAPES" --into main 2>&1); rc=$?
check "a quarantined result cannot be applied (exit $rc)" test "$rc" -ne 0
check "... and says why" grep -q "quarantined\|no result\|result_invalid\|not reviewable\|invalid" <<<"$out"

# --- a failed agent and a lost holder: quarantined with the reason -------------------
j=$(js "$FAILS")
check "fails: failed (exit 1), its work quarantined (lease_failed)" jq_eq "$j" \
	'"\(.lease_state) \(.failed_reason) \(.result.status) \([.result.reasons[].reason] | join(","))"' \
	"failed exit 1 quarantined lease_failed"
check "fails: the patch shows what it did" grep -q '^+half$' "$CORRAL_STATE_DIR/leases/$FAILS/result/patch"
check "fails: nothing materialised" test "$(tip "corral/$FAILS")" = "$BASE"
j=$(js "$LOST")
check "lost: reconcile fails it (holder_lost), its work quarantined" jq_eq "$j" \
	'"\(.lease_state) \(.failed_reason) \(.result.status) \([.result.reasons[].detail] | join(","))"' \
	"failed holder_lost quarantined holder_lost"
check "lost: the patch shows what it did" grep -q '^+lost$' "$CORRAL_STATE_DIR/leases/$LOST/result/patch"
check "lost: nothing materialised" test "$(tip "corral/$LOST")" = "$BASE"

# --- a background process swapping a file for a symlink -------------------------------
j=$(js "$SWAP")
if jq -e '.result.status == "quarantined"' >/dev/null <<<"$j"; then
	check "swapper: refused for a named reason" jq -e '.result.reasons |
	    any(.reason == "symlink" or .reason == "changed_during_extraction" or
	    .reason == "unreadable")' <<<"$j"
	check "swapper: nothing materialised" test "$(tip "corral/$SWAP")" = "$BASE"
else
	c=$(tip "corral/$SWAP")
	check "swapper: consistent: no symlink in the result commit" bash -c \
		"! git -C '$REPO' ls-tree -r $c | grep -q '^120000'"
	check "swapper: f is the regular version" test "$(git -C "$REPO" show "$c:f")" = x
fi
# (by PID, not by uid: the slot may already serve another lease on this
# machine)
check "swapper: none of its processes survive" all_gone "$SWAP_PROCS"

# --- the workspace changing during extraction (from the host) ---------------------------
wait "$RACER"
j=$(js "$RACE")
if jq -e '.result.status == "quarantined"' >/dev/null <<<"$j"; then
	check "race: refused for a named reason" jq -e '.result.reasons |
	    any(.reason == "symlink" or .reason == "changed_during_extraction" or
	    .reason == "unreadable")' <<<"$j"
	check "race: nothing materialised" test "$(tip "corral/$RACE")" = "$BASE"
	echo "# race: quarantined ($(jq -c '[.result.reasons[].reason]' <<<"$j"))"
else
	c=$(tip "corral/$RACE")
	check "race: consistent: no symlink in the result commit" bash -c \
		"! git -C '$REPO' ls-tree -r $c | grep -q '^120000'"
	check "race: f is one whole regular version" bash -c \
		"git -C '$REPO' show $c:f | grep -qxE 'start|A{1000}'"
	echo "# race: a consistent result"
fi

# --- terminal escapes from the sandbox are printed escaped (SPEC 4.7) -----------------
noraw() { ! printf '%s' "$1" | LC_ALL=C grep -q "$(printf '[\033\007]')"; }
out=$("$CORRAL" review "$ESCS" 2>&1)
check "review: no raw ESC or BEL" noraw "$out"
check "review: OSC 52 shown escaped" grep -qF '\x1b]52;c;aGk=\x07' <<<"$out"
check "review: the title sequence shown escaped" grep -qF '\x1b]0;pwned\x07' <<<"$out"
out=$("$CORRAL" review "$ESCS" --json 2>&1)
check "review --json: no raw ESC" noraw "$out"
check "review --json: the bytes survive as JSON escapes" grep -qiF '\u001b]52;c;aGk=' <<<"$out"
out=$("$CORRAL" review "$SHAPES" 2>&1)
check "review of a quarantined result: no raw ESC or BEL" noraw "$out"
check "review of a quarantined result: the name shown escaped" grep -qF 'esc\x1b]0;t\x07' <<<"$out"
for o in "" --json; do
	out=$("$CORRAL" show "$SHAPES" $o 2>&1)
	check "show $o of a quarantined result: no raw ESC or BEL" noraw "$out"
	check "show $o of a quarantined result: the name as a JSON escape" \
		grep -qiF 'esc\u001b]0;t\u0007' <<<"$out"
done
out=$("$CORRAL" show "$ESCS" 2>&1)
check "show: no raw ESC or BEL" noraw "$out"

# --- two leases from one base, each in its own review worktree (SPEC 10.4) -----------
WT=$CORRAL_STATE_DIR/worktrees
for id in $ALPHA $BETA $GAMMA $DELTA $HUNKS $CONFL $TAMPER $OWNER $BIN; do
	check "$(js $id | jq -r .name): result_ready with a commit on corral/<id>" jq_eq "$(js $id)" \
		'"\(.lease_state) \(.result.status) \(.result.commit == null)"' "result_ready ready false"
done
check "alpha: its commit is on corral/alpha, parent the base" test \
	"$(tip "corral/$ALPHA^")" = "$BASE" -a "$(tip "corral/$ALPHA")" = "$(js $ALPHA | jq -r .result.commit)"
check "alpha: its worktree has only its change" bash -c \
	"grep -qx alpha '$WT/$ALPHA/README' && test ! -e '$WT/$ALPHA/src/b.c' &&
	 test \"\$(git -C '$WT/$ALPHA' rev-parse HEAD)\" = '$(tip "corral/$ALPHA")'"
check "beta: its worktree has only its change" bash -c \
	"test \"\$(cat '$WT/$BETA/src/b.c')\" = 'int b;' && ! grep -q alpha '$WT/$BETA/README' &&
	 test \"\$(git -C '$WT/$BETA' rev-parse HEAD)\" = '$(tip "corral/$BETA")'"
check "the branches differ only by their own change" test \
	"$(git -C "$REPO" diff --name-only "$BASE" "corral/$ALPHA") $(git -C "$REPO" diff --name-only "$BASE" "corral/$BETA")" = "README src/b.c"
check "the commit is by corral, naming the lease" bash -c \
	"git -C '$REPO' log -1 --format='%an %cn %B' corral/$BETA | grep -q 'corral corral.*$BETA'"
j=$(js $BETA)
check "beta: its checks ran in the exec zone and passed" jq_eq "$j" \
	'[.result.checks[] | "\(.name)=\(.status)"] | sort | join(" ")' "b=pass readme=pass"
check "beta: the check on an input it did not touch is independent" jq_eq "$j" \
	'.result.checks[] | select(.name=="readme") | .independent' true
check "beta: the check reading the file it wrote is not independent" jq_eq "$j" \
	'.result.checks[] | select(.name=="b") | "\(.independent) \(.changed_inputs)"' 'false ["src/b.c"]'
check "beta: the check's bounded log is in its receipt" jq_eq "$j" \
	'.receipts[] | select(.kind=="check" and .fields.name=="b") | .fields.log' "int b;"
out=$("$CORRAL" apply "$BETA" --into main 2>&1); rc=$?
check "apply before review is refused (exit $rc)" test "$rc" -ne 0
check "... as not reviewed" grep -qi "review" <<<"$out"
for id in $ALPHA $BETA $GAMMA $DELTA $HUNKS $CONFL $TAMPER $OWNER; do
	"$CORRAL" review "$id" >"$TMP/review.$id" 2>&1 || fail "review $id"
done
# wait --until result_ready returns once the result exists (the holder
# moves the lease after extraction): review works at once.
W=$(agent waited 'echo waited >w.txt')
"$CORRAL" wait "$W" --until result_ready,failed --timeout 120 >/dev/null 2>&1
out=$("$CORRAL" review "$W" 2>&1); rc=$?
check "wait --until result_ready, then review at once (exit $rc)" test "$rc" -eq 0
check "... it shows the commit" grep -q "^commit .* on corral/$W" <<<"$out"
settled "$W"
"$CORRAL" reject "$W" >/dev/null 2>&1
check "review prints the commit and the hunk IDs" bash -c \
	"grep -q '$(tip "corral/$BETA")' '$TMP/review.$BETA' && grep -qE '\[[0-9a-f]{8}:1:1\]' '$TMP/review.$BETA'"

# --- reject one ---------------------------------------------------------------------
check "reject alpha" "$CORRAL" reject "$ALPHA"
check "alpha: rejected, cleanup confirmed" jq_eq "$(js "$ALPHA")" \
	'"\(.lease_state) \(.cleanup)"' "rejected confirmed"
check "alpha: worktree and workspace removed, patch and manifest kept" bash -c \
	"test ! -e '$WT/$ALPHA' -a ! -e '$CORRAL_STATE_DIR/leases/$ALPHA/work' &&
	 test -s '$CORRAL_STATE_DIR/leases/$ALPHA/result/patch' -a -s '$CORRAL_STATE_DIR/leases/$ALPHA/result/manifest.json'"

# --- apply the other: a checked-out target is refused with the hint (SPEC 7.6) ----
out=$("$CORRAL" apply "$BETA" 2>&1); rc=$?
check "apply into the checked-out main: refused (exit $rc)" test "$rc" -eq 1
check "... with the merge hint" grep -qF "cd $REPO && git merge --ff-only corral/$BETA" <<<"$out"
check "... naming git merge --ff-only corral/<id>" grep -qF "git merge --ff-only corral/$BETA" <<<"$out"
check "... main did not move" test "$(tip main)" = "$BASE"
git -C "$REPO" branch release main
out=$("$CORRAL" apply "$BETA" --into release 2>&1); rc=$?
check "apply into release (exit $rc)" test "$rc" -eq 0
check "... prints the fast-forward" grep -q "applied $BETA: refs/heads/release" <<<"$out"
check "release is the reviewed commit" test "$(tip release)" = "$(js $BETA | jq -r .result.commit)"
check "release has beta's change" test "$(git -C "$REPO" show release:src/b.c)" = "int b;"
check "beta: applied, cleanup confirmed" jq_eq "$(js "$BETA")" \
	'"\(.lease_state) \(.cleanup)"' "applied confirmed"
check "beta: receipt 'applied' with the target" jq_eq "$(js "$BETA")" \
	'[.receipts[] | select(.kind=="applied")] | length' 1
check "beta: worktree and workspace removed" test ! -e "$WT/$BETA" -a ! -e "$CORRAL_STATE_DIR/leases/$BETA/work"
check "the operator's checkout, index and main are byte-identical" test "$BEFORE" = "$(hash_checkout)"

# --- an advanced target: back to review, re-verified (SPEC 7.6) -----------------------
# branch NAME FILE TEXT: a new branch from main with one commit writing FILE
# (plumbing only: the operator's checkout and index are not touched).
branch() {
	local b t c
	b=$(printf '%s\n' "$3" | git -C "$REPO" hash-object -w --stdin)
	GIT_INDEX_FILE=$TMP/idx git -C "$REPO" read-tree main
	GIT_INDEX_FILE=$TMP/idx git -C "$REPO" update-index --add --cacheinfo "100644,$b,$2"
	t=$(GIT_INDEX_FILE=$TMP/idx git -C "$REPO" write-tree)
	c=$(git -C "$REPO" commit-tree "$t" -p main -m "$1")
	git -C "$REPO" branch "$1" "$c"
}
branch side side.txt side
SIDE=$(tip side)
old=$(js $GAMMA | jq -r .result.commit)
out=$("$CORRAL" apply "$GAMMA" --into side 2>&1); rc=$?
check "advanced target: apply exits 1 (exit $rc)" test "$rc" -eq 1
check "... and says to review again" grep -q "re-verified on top of it.*review it again" <<<"$out"
check "... side did not move" test "$(tip side)" = "$SIDE"
j=$(js $GAMMA)
check "... a new result commit on top of the target, unreviewed" jq_eq "$j" \
	'"\(.lease_state) \(.result.via) \(.result.parent) \(.result.reviewed)"' "result_ready rebased $SIDE null"
check "... corral/<id> and the review worktree moved to it" bash -c \
	"test '$(tip "corral/$GAMMA")' = '$(jq -r .result.commit <<<"$j")' -a '$(tip "corral/$GAMMA")' != '$old' &&
	 test \"\$(git -C '$WT/$GAMMA' rev-parse HEAD)\" = '$(tip "corral/$GAMMA")' && test -f '$WT/$GAMMA/side.txt'"
check "... the old commit is in the history" jq_eq "$j" \
	"[.result.history[] | select(.commit==\"$old\")] | length" 1
check "... a result_rebased receipt" jq_eq "$j" '[.receipts[] | select(.kind=="result_rebased")] | length' 1
out=$("$CORRAL" apply "$GAMMA" --into side 2>&1); rc=$?
check "... apply again without review is refused (exit $rc)" test "$rc" -ne 0
"$CORRAL" review "$GAMMA" >/dev/null 2>&1
check "... reviewed, it applies" "$CORRAL" apply "$GAMMA" --into side
check "... side has both changes" bash -c \
	"git -C '$REPO' show side:side.txt | grep -qx side && git -C '$REPO' show side:c.txt | grep -qx gamma"

# A target that advanced with a conflicting change: refused, nothing changes.
branch conf nums.txt "$(seq 1 40 | sed 5s/.*/V/)"
CONF=$(tip conf)
old=$(js $CONFL | jq -r .result.commit)
out=$("$CORRAL" apply "$CONFL" --into conf 2>&1); rc=$?
check "conflicting target: refused (exit $rc)" test "$rc" -eq 1
check "... no longer applies" grep -q "no longer applies" <<<"$out"
check "... nothing changed" test "$(tip conf)" = "$CONF" -a "$(tip "corral/$CONFL")" = "$old" -a \
	"$(js $CONFL | jq -r .result.commit)" = "$old"
check "... receipt apply_refused no_longer_applies" jq_eq "$(js $CONFL)" \
	'[.receipts[] | select(.kind=="apply_refused") | .fields.reason] | last' no_longer_applies

# --- a review worktree edited after review: apply refuses (SPEC 7.6) -----------------
echo edited >>"$WT/$DELTA/e.txt"
REL=$(tip release)
out=$("$CORRAL" apply "$DELTA" --into release 2>&1); rc=$?
check "edited review worktree: apply refused (exit $rc)" test "$rc" -ne 0
check "... changed after review, naming the file" grep -q "changed after review (e.txt)" <<<"$out"
check "... release did not move" test "$(tip release)" = "$REL"
check "... receipt apply_refused stale" jq_eq "$(js $DELTA)" \
	'[.receipts[] | select(.kind=="apply_refused") | .fields.reason] | last' stale

# --- --hunks: a new commit of the selected hunks, verified, then applied ------------------
D=$("$CORRAL" review "$HUNKS" --json | jq -r .hunk_digest)
check "hunks: two hunks in nums.txt" grep -q "\[$D:1:2\]" "$TMP/review.$HUNKS"
git -C "$REPO" branch rel2 main
old=$(js $HUNKS | jq -r .result.commit)
out=$("$CORRAL" apply "$HUNKS" --into rel2 --hunks "$D:1:2" 2>&1); rc=$?
check "hunks: apply --hunks $D:1:2 (exit $rc)" test "$rc" -eq 0
check "hunks: rel2 has the second hunk only" bash -c \
	"git -C '$REPO' show rel2:nums.txt | sed -n '1p;40p' | tr '\n' ' ' | grep -qx '1 FORTY '"
check "hunks: a new commit (via hunks), the old one in the history" jq_eq "$(js $HUNKS)" \
	"\"\(.lease_state) \(.result.via) \(.result.commit != \"$old\") \(.result.commit == \"$(tip rel2)\")\"" \
	"applied hunks true true"
check "hunks: a stale digest is refused" bash -c \
	"! '$CORRAL' apply '$TAMPER' --into rel2 --hunks 00000000:1:1"

# --- artifacts from the policy's output directory (SPEC 7.1) ----------------------------
j=$(js $OWNER)
check "artifacts: out/report.txt copied out, not in the patch" bash -c \
	"test \"\$(cat '$CORRAL_STATE_DIR/leases/$OWNER/result/artifacts/report.txt')\" = '3 tests passed' &&
	 ! grep -q report.txt '$CORRAL_STATE_DIR/leases/$OWNER/result/patch' &&
	 ! git -C '$REPO' cat-file -e corral/$OWNER:out/report.txt 2>/dev/null"
check "artifacts: counted in the result" jq_eq "$j" '"\(.result.artifacts.files) \(.result.artifacts.bytes)"' "1 15"

# --- binary content allowed by the policy ----------------------------------------------
# The workspace is released once the result is a commit (issue 17): the
# bytes extraction read from it are the manifest's SHA-256.
M=$CORRAL_STATE_DIR/leases/$BIN/result/manifest.json
check "bin: both files materialised byte for byte" bash -c \
	"for f in rnd.bin late.txt; do
		test \"\$(jq -r --arg f \$f '.files[] | select(.path == \$f) | .sha256' '$M')\" = \
		    \"\$(sha256sum <'$WT/$BIN/'\$f | cut -d' ' -f1)\" || exit 1
	 done
	 cmp -s <(head -c 9000 /dev/zero | tr '\\000' a; printf '\\000') '$WT/$BIN/late.txt'"
check "bin: its workspace released" bash -c \
	"test ! -e '$CORRAL_STATE_DIR/leases/$BIN/work' -a \"\$('$CORRAL' show $BIN --json | jq -r .result.workspace)\" = released"
check "bin: as GIT binary patches" test \
	"$(grep -c '^GIT binary patch' "$CORRAL_STATE_DIR/leases/$BIN/result/patch")" = 2
check "bin: no NUL in the patch" test \
	"$(tr -d -c '\000' <"$CORRAL_STATE_DIR/leases/$BIN/result/patch" | wc -c)" = 0

# --- a target checked out in a linked worktree: the owner runs the merge ---------------
git -C "$REPO" worktree add -q -b wtb "$TMP/wt" main
out=$("$CORRAL" apply "$OWNER" --into wtb 2>&1); rc=$?
check "owner: wtb checked out in a linked worktree: refused (exit $rc)" test "$rc" -eq 1
check "... the hint names that worktree" grep -qF "cd $TMP/wt && git merge --ff-only corral/$OWNER" <<<"$out"
(cd "$TMP/wt" && git merge -q --ff-only "corral/$OWNER")
out=$("$CORRAL" apply "$OWNER" --into wtb 2>&1); rc=$?
check "owner: after the owner's merge, apply marks it applied (exit $rc)" test "$rc" -eq 0
check "... saying it was in already" grep -q "was in the target already" <<<"$out"
check "... applied" jq_eq "$(js $OWNER)" .lease_state applied
git -C "$REPO" worktree remove "$TMP/wt"

# --- a tampered patch: a named error, nothing applied (SPEC 9.4) ------------------------
P=$CORRAL_STATE_DIR/leases/$TAMPER/result/patch
check "tamper: the patch is stored in the lease's result directory" test -s "$P"
truncate -s -3 "$P"
git -C "$REPO" branch rel3 main
for cmd in "review $TAMPER" "apply $TAMPER --into rel3" "apply $TAMPER --into rel3 --hunks $(js $TAMPER | jq -r .result.patch.sha256 | cut -c1-8):1"; do
	out=$("$CORRAL" $cmd 2>&1); rc=$?
	check "truncated patch: corral ${cmd%% *} refuses (exit $rc)" test "$rc" -ne 0
	check "... naming the digest mismatch" grep -q "does not match the digest" <<<"$out"
done
check "tamper: rel3 did not move" test "$(tip rel3)" = "$BASE"
check "tamper: still result_ready, not applied" jq_eq "$(js $TAMPER)" .lease_state result_ready

# --- reject the rest; after reconcile nothing of any lease is left (SPEC 10.6) ----------
for id in $FAILS $LOST $SHAPES $MANY $SPARSE $SWAP $RACE $ESCS $BIN $DELTA $CONFL $TAMPER $NAMES $TWINS; do
	"$CORRAL" reject "$id" >/dev/null 2>&1 || fail "reject $(js $id | jq -r .name)"
done
out=$("$CORRAL" reconcile 2>&1); rc=$?
check "reconcile (exit $rc)" test "$rc" -eq 0
gone=0
for id in $ALL; do
	n=$(js $id | jq -r .name)
	j=$(js $id)
	if jq -e '.cleanup == "confirmed" and (.lease_state == "applied" or
	    .lease_state == "rejected" or .lease_state == "failed")' >/dev/null <<<"$j" &&
	    [ -z "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "lease-$id" 2>/dev/null)" ] &&
	    ! grep -qF "$id" /proc/self/mountinfo &&
	    holder_gone "$id" &&
	    ! grep -qlx "$id" /run/corral/uids/slot-*/owner 2>/dev/null &&
	    [ ! -e "$WT/$id" ] && [ ! -e "$CORRAL_STATE_DIR/leases/$id/work" ] &&
	    [ ! -e "$CORRAL_STATE_DIR/leases/$id/work.img" ] &&
	    { [ -s "$CORRAL_STATE_DIR/leases/$id/result/manifest.json" ] ||
	      [ -s "$CORRAL_STATE_DIR/leases/$id/result/reasons.json" ]; } &&
	    jq -e '.receipt.verified' >/dev/null <<<"$j"; then
		gone=$((gone + 1))
	else
		fail "$n: left: $(jq -c '[.lease_state, .failed_reason, .cleanup]' <<<"$j") $(grep -F "$id" /proc/self/mountinfo | awk '{print $5}')"
	fi
done
check "all 19 leases: cleanup confirmed; no cgroup, mount, holder, uid slot, worktree or workspace; result and receipts kept" test "$gone" = 19
check "no live lease is listed" jq_eq "$("$CORRAL" ls --json)" length 0
check "the operator's checkout, index and main are still byte-identical" test "$BEFORE" = "$(hash_checkout)"
check "no holder reported a sanitizer error (ASan builds)" bash -c \
	"! grep -l 'AddressSanitizer\|runtime error:\|LeakSanitizer' '$CORRAL_STATE_DIR'/leases/*/holder.log"
echo "# results.sh took $(( $(date +%s) - T0 ))s"
finish
