# lib.bash: helpers for the real-agent tests (issue 18), over
# tests/e2e/lib.bash: the mock model server on loopback, the operator's one
# setting (the agent's model endpoint), the repository, and checks of the
# lease from the host side (activity, screen, receipts, result, processes).
. "$CORRAL_SRC/tests/e2e/lib.bash"
needs_root "real sandboxes"
AGENTS=${CORRAL_AGENTS_DIR:?CORRAL_AGENTS_DIR must name the installed agents}
EDIT_TEXT='edited by the agent through corral'

# agent_setup PROFILE COMMAND [BINDIR]: the mock, the config, the
# repository, PATH (BINDIR: where COMMAND is, else its npm install's)
agent_setup() {
	PROFILE=$1
	local bin=${3:-$AGENTS/$1/node_modules/.bin}
	[ -x "$bin/$2" ] || {
		echo "$1 is not installed in $AGENTS (the agents/install test installs it)"
		exit 1
	}
	python3 "$CORRAL_SRC/tests/agents/mock_model.py" --log "$TMP/mock.log" \
		>"$TMP/port" &
	MOCK_PID=$!
	trap 'kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null; cleanup' EXIT
	poll test -s "$TMP/port" || { echo "the mock model did not start"; exit 1; }
	MOCK_PORT=$(cat "$TMP/port")
	mkdir -p "$XDG_CONFIG_HOME/corral"
	printf '[agent %s]\nendpoint = http://127.0.0.1:%s\n' "$1" "$MOCK_PORT" \
		>"$XDG_CONFIG_HOME/corral/config"
	check "no policy, credentials or rules file of the operator's" test ! -e \
		"$XDG_CONFIG_HOME/corral/policy.ini" -a ! -e \
		"$XDG_CONFIG_HOME/corral/credentials.ini" -a ! -e \
		"$XDG_CONFIG_HOME/corral/agents"
	new_repo "$TMP/repo"
	echo "a repository" >"$TMP/repo/README"
	git -C "$TMP/repo" add README && git -C "$TMP/repo" commit -q -m base
	export PATH="$bin:$PATH"
}

js() { "$CORRAL" show "$1" --json; }
# profile_is ID: the lease runs under $PROFILE (identified from its
# command; generic.sh, which names it with --agent, redefines this)
profile_is() {
	has_receipt "$1" agent ".fields.detail == \"identified as $PROFILE\""
}
# has_receipt ID KIND JQ-CONDITION
has_receipt() {
	[ "$(js "$1" | jq "[.receipts[] | select(.kind == \"$2\") | select($3)] | length")" -gt 0 ]
}
# wait_activity ID STATE SECONDS
wait_activity() {
	"$CORRAL" wait "$1" --until "$2" --timeout "$3" >/dev/null 2>&1
}
# screen_ok NAME ID REGEX: the screen shows nothing matching REGEX
screen_ok() {
	local s
	s=$("$CORRAL" screen "$2" 2>&1)
	if echo "$s" | grep -qiE -- "$3"; then
		fail "$1"
		echo "$s" | grep -iE -- "$3" | head -3
	else
		pass "$1"
	fi
}
# record ID STATE: its screen into $CORRAL_RECORD_SCREENS/PROFILE/STATE.screen;
# with CORRAL_RECORD_BYTES=DIR, also what the agent wrote so far (the
# holder's transcript) into DIR/PROFILE-STATE.bytes and its size into
# DIR/PROFILE-STATE.size (how tests/fixtures/tmuxdiff's agent recordings
# were made)
record() {
	[ -n "${CORRAL_RECORD_SCREENS:-}${CORRAL_RECORD_BYTES:-}" ] || return 0
	local prof
	prof=$(js "$1" | jq -r '[.receipts[] | select(.kind == "agent")][0].fields.detail' |
		sed 's/^identified as //')
	if [ -n "${CORRAL_RECORD_SCREENS:-}" ]; then
		mkdir -p "$CORRAL_RECORD_SCREENS/$prof"
		"$CORRAL" screen "$1" >"$CORRAL_RECORD_SCREENS/$prof/$2.screen"
	fi
	if [ -n "${CORRAL_RECORD_BYTES:-}" ]; then
		mkdir -p "$CORRAL_RECORD_BYTES"
		cp "$CORRAL_STATE_DIR/leases/$1/transcript" \
			"$CORRAL_RECORD_BYTES/$prof-$2.bytes"
		"$CORRAL" screen "$1" --json | jq -r '"\(.rows) \(.cols)"' \
			>"$CORRAL_RECORD_BYTES/$prof-$2.size"
	fi
}
# ask ID TEXT: type TEXT, wait for its echo, then Enter (a paste and its
# Enter in one write is taken as a paste)
ask() {
	"$CORRAL" send "$1" "$2" >/dev/null
	wait_screen "$1" "$2" 10
	"$CORRAL" send "$1" '\r' >/dev/null
	entered
}
# entered: when Enter went (sample.py: from then the agent works)
entered() { date +%s%3N >>"$TMP/enters"; }
# ask_again ID TEXT: ask, typing TEXT again while its echo does not show
ask_again() {
	local i
	for i in 1 2 3 4 5; do
		"$CORRAL" send "$1" "$2" >/dev/null
		wait_screen "$1" "$2" 5 && break
	done
	wait_screen "$1" "$2" 1 && "$CORRAL" send "$1" '\r' >/dev/null
	entered
}
# activity_after ID A B: a transition to B after the last one to A
activity_after() {
	js "$1" | jq -e --arg a "$2" --arg b "$3" '[.transitions[] |
	    select(.kind == "activity")] | (map(.to) | rindex($a)) as $i |
	    $i != null and (.[$i + 1:] | map(.to) | index($b)) != null' >/dev/null
}
# result_is_the_edit ID: the manifest is exactly the edit, nothing of HOME
result_is_the_edit() {
	local r
	r=$("$CORRAL" review "$1" --json)
	check "the result's manifest is exactly the edit" jq_eq "$r" \
		'[.manifest.files[] | "\(.status) \(.path) \(.new_mode)"] | join(",")' \
		"added corral-edit.txt 100644"
	check "... which is in its review worktree" grep -qxF "$EDIT_TEXT" \
		"$(echo "$r" | jq -r .worktree)/corral-edit.txt"
	check "... with no review flag" jq_eq "$r" '.result.flags | length' 0
	check "nothing of its HOME is in the result" test -z "$(echo "$r" |
	    jq -r '.manifest.files[].path' | grep -E '(^|/)\.(claude|codex|config|npm|cache)|home/sbx')"
}
# no_violation ID: no egress refusal ended the lease
no_violation() {
	check "no egress refusal ended it" test "$(js "$1" | jq '[.receipts[] |
	    select(.kind == "hermeticity_violation" or (.kind == "egress" and
	    .fields.action == "lease ended"))] | length')" = 0
}
# nothing_survives ID: no process of the lease's uid is left on the host
uid_procs() { ps -o pid= -u "$1" 2>/dev/null | tr -d ' ' | grep . ; }
# lease_procs UID ID: the processes of UID that are not another lease's:
# once lease ID gave its uid back, another lease (another test, another
# corral on the host) may take it at once, and its processes live in its
# own lease cgroup
lease_procs() {
	local p
	for p in $(uid_procs "$1"); do
		if grep -q '/lease-' "/proc/$p/cgroup" 2>/dev/null &&
		    ! grep -qE "/lease-$2(/|\$)" "/proc/$p/cgroup" 2>/dev/null; then
			continue
		fi
		[ -e "/proc/$p" ] && echo "$p"
	done | grep .
}
nothing_survives() {
	local uid
	uid=$(js "$1" | jq -r '[.receipts[] | select(.kind == "sandbox")][0].fields.uid')
	check "its sandbox had a uid of its own" test "$uid" -gt 0
	check "no process of the lease survives (uid $uid)" poll_not lease_procs "$uid" "$1"
	check "its teardown succeeded" has_receipt "$1" teardown '.fields.ok == true'
}
# poll_not CMD...: until CMD fails, at most 30 s
poll_not() {
	local i
	for i in $(seq 150); do
		"$@" >/dev/null 2>&1 || return 0
		sleep 0.2
	done
	return 1
}

# agent_session ID: the whole session every agent test drives, from the
# host side, with what differs per agent in variables:
#   PROMPT_TEXT   text its input prompt shows
#   FIRST_RUN     a regex of first-run dialogs that must not show
#   DIALOG_TEXT   the permission dialog's question for the edit
#   APPROVE       the key that approves it
#   ERROR_TEXT    how it shows an API error
#   STREAM_TEXT   what it shows while an answer streams
agent_session() {
	local id=$1
	check "it reaches its prompt" wait_activity "$id" prompt 90
	check "... its profile is $PROFILE" profile_is "$id"
	check "... showing its input prompt" wait_screen "$id" "$PROMPT_TEXT" 30
	screen_ok "with no first-run dialog" "$id" "$FIRST_RUN"
	record "$id" prompt

	# A plain answer.
	ask "$id" 'say hello'
	check "a plain answer comes back" wait_screen "$id" 'Hello from the mock model.' 60
	check "... and it is at its prompt again" wait_activity "$id" prompt 60

	# A slow answer: working while it streams.
	ask "$id" 'CORRAL-SLOW please'
	check "while the answer streams: working" wait_activity "$id" working 30
	# Its status line while the model thinks is one for the corpus.
	wait_screen "$id" 'to interrupt' 10 && record "$id" working
	check "... showing: $STREAM_TEXT" wait_screen "$id" "$STREAM_TEXT" 10
	check "... then the answer, at its prompt" wait_screen "$id" 'ending here.' 60
	wait_activity "$id" prompt 60

	# An edit: it asks first.
	ask "$id" 'Please CORRAL-EDIT the file'
	check "the edit waits on the permission dialog: blocked" wait_activity "$id" blocked 60
	check "... which asks: $DIALOG_TEXT" wait_screen "$id" "$DIALOG_TEXT" 10
	record "$id" blocked
	"$CORRAL" send "$id" "$APPROVE" >/dev/null
	entered
	check "approved, it writes and answers" wait_screen "$id" 'Edit done.' 60
	check "... working after the dialog" poll activity_after "$id" blocked working
	check "... then at its prompt" wait_activity "$id" prompt 60
	record "$id" prompt-answered

	# An API error is shown and the agent stays usable.
	ask "$id" 'now CORRAL-ERROR'
	check "an API error is shown" wait_screen "$id" "$ERROR_TEXT" 60
	check "... and it is at its prompt again" wait_activity "$id" prompt 60
	record "$id" prompt-error

	agent_exit "$id"
	check "/exit ends it: done" wait_activity "$id" done 60
	"$CORRAL" wait "$id" --until result_ready,failed --timeout 120 >/dev/null
	check "its result is ready (it passed the gate)" jq_eq "$(js "$id")" \
		.lease_state result_ready
	result_is_the_edit "$id"
	no_violation "$id"
	check "the model requests reached the mock" test "$(jq -s \
	    '[.[] | select(.api != null)] | length' "$TMP/mock.log")" -ge 4
	nothing_survives "$id"
}

# sample_start ID: sample its activity against its screen every 100 ms
# (sample.py) until it ends; sample_score: the figures of every lease
# sampled, printed, and into $CORRAL_SAMPLES/PROFILE.json when set
sample_start() {
	python3 "$CORRAL_SRC/tests/agents/sample.py" run "$1" "$TMP/samples-$1.jsonl" &
	SAMPLERS+=("$!")
}
SAMPLERS=()
sample_score() {
	local p
	for p in "${SAMPLERS[@]}"; do
		poll_not kill -0 "$p" || kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	python3 "$CORRAL_SRC/tests/agents/sample.py" score "$TMP/mock.log" \
		"$TMP"/samples-*.jsonl >"$TMP/score" || return 1
	cat "$TMP/score"
	if [ -n "${CORRAL_SAMPLES:-}" ]; then
		local d=$CORRAL_SAMPLES/$PROFILE${SAMPLE_TAG:-}
		mkdir -p "$d"
		tail -1 "$TMP/score" >"$d.json"
		cp "$TMP"/samples-*.jsonl "$TMP/mock.log" "$TMP/enters" "$d/" \
			2>/dev/null
	fi
	check "no dialog was shown as anything but blocked after 200 ms" \
		test "$(tail -1 "$TMP/score" | jq .dialog_wrong)" = 0
}

# agent_new CMD: `corral new -- CMD` in the repository, then the whole
# session, and the background destinations it tried refused and recorded
agent_new() {
	local id
	id=$(cd "$TMP/repo" && "$CORRAL" new -- "$1" 2>"$TMP/new.err")
	check "corral new -- $1 starts a lease" valid_id "$id"
	[ -n "$id" ] || { cat "$TMP/new.err"; finish; exit 1; }
	check "... sandboxed with bwrap" jq_eq "$(js "$id")" \
		'"\(.mode) \(.adapter)"' "sandboxed bwrap"
	sample_start "$id"
	agent_session "$id"
	check "its background destinations were refused and recorded" \
		has_receipt "$id" egress '.fields.action == "refused (background)"'
}

agent_exit() {
	"$CORRAL" send "$1" '/exit' >/dev/null
	wait_screen "$1" '/exit' 10
	"$CORRAL" send "$1" '\r' >/dev/null
}

# prompt_file_session CMD: the edit again, its prompt from --prompt-file
prompt_file_session() {
	local id
	printf 'Please CORRAL-EDIT the file\n' >"$TMP/prompt.txt"
	id=$(cd "$TMP/repo" && "$CORRAL" new ${NEW_OPTS:-} --prompt-file "$TMP/prompt.txt" -- "$1")
	check "--prompt-file: the prompt is sent and the edit waits: blocked" \
		wait_activity "$id" blocked 120
	"$CORRAL" send "$id" "$APPROVE" >/dev/null
	entered
	check "... approved, it answers" wait_screen "$id" 'Edit done.' 60
	wait_activity "$id" prompt 60
	agent_exit "$id"
	"$CORRAL" wait "$id" --until result_ready,failed --timeout 120 >/dev/null
	check "... its result is ready" jq_eq "$(js "$id")" .lease_state result_ready
	result_is_the_edit "$id"
	nothing_survives "$id"
}

# first_run_profile: the shipped profile as the operator's own, but its
# HOME without the answers to the CLI's first-run dialogs (FIRST_RUN_HOME:
# the template file, FIRST_RUN_SEED: what it holds instead)
first_run_profile() {
	local a=$XDG_CONFIG_HOME/corral/agents
	mkdir -p "$a/$PROFILE.home"
	cp "$CORRAL_SRC/agents/$PROFILE.sandbox" "$a/"
	printf '%s\n' "$FIRST_RUN_SEED" >"$a/$PROFILE.home/$FIRST_RUN_HOME"
}
# question ID JQ: the question the lease asks now, through jq
question() { "$CORRAL" ls --json | jq -r --arg id "$1" ".[] | select(.id == \$id) | .question | $2"; }
# answer_dialog ID NAME TEXT OPTION: blocked on the dialog whose screen
# shows TEXT, asked as data, answered with `corral answer` by OPTION,
# recorded as blocked-NAME
answer_dialog() {
	local id=$1 digest
	check "$2: blocked on the dialog" wait_activity "$id" blocked 90
	check "... which shows: $3" wait_screen "$id" "$3" 30
	record "$id" "blocked-$2"
	check "... asked as data: a question with its options" test \
		"$(question "$id" '(.options | length) >= 2 and (.digest | length) == 16')" = true
	digest=$(question "$id" .digest)
	check "... an answer to another question is refused" not \
		"$CORRAL" answer "$id" "$4" --digest 0123456789abcdef
	check "... and typed nothing: still blocked on it" test \
		"$(question "$id" .digest)" = "$digest"
	check "... answered with corral answer $4" "$CORRAL" answer "$id" "$4" \
		--digest "$digest"
	[ "$2" = edit ] && entered	# it works on (a first-run answer: no)
	check "... the receipt says who answered what" poll has_receipt "$id" answer \
		"(.fields.detail | test(\"answered .* \\\\(question $digest\\\\)\"))"
}
not() { ! "$@"; }

# first_run_session CMD: the CLI's first-run dialogs, each blocked and
# answered with corral answer (FIRST_DIALOGS: "NAME|TEXT|OPTION" lines),
# then the edit's permission dialog the same way, and exit
first_run_session() {
	local id line name text opt
	first_run_profile
	id=$(cd "$TMP/repo" && "$CORRAL" new -- "$1" 2>"$TMP/new.err")
	check "corral new -- $1 (first run) starts a lease" valid_id "$id"
	[ -n "$id" ] || { cat "$TMP/new.err"; finish; exit 1; }
	sample_start "$id"
	while IFS='|' read -r name text opt; do
		[ -n "$name" ] && answer_dialog "$id" "$name" "$text" "$opt"
	done <<<"$FIRST_DIALOGS"
	check "past its first-run dialogs: at its prompt" wait_activity "$id" prompt 90
	check "... showing its input prompt" wait_screen "$id" "$PROMPT_TEXT" 30
	# Just past a dialog it may still be starting up and drop what is
	# typed: type again until the echo shows (nothing else is typed then).
	check "the edit is asked" ask_again "$id" 'Please CORRAL-EDIT the file'
	answer_dialog "$id" edit "$DIALOG_TEXT" "$APPROVE_OPTION"
	check "answered, it writes and answers" wait_screen "$id" 'Edit done.' 60
	check "... then at its prompt" wait_activity "$id" prompt 60
	agent_exit "$id"
	"$CORRAL" wait "$id" --until result_ready,failed --timeout 120 >/dev/null
	check "... its result is ready" jq_eq "$(js "$id")" .lease_state result_ready
	result_is_the_edit "$id"
	nothing_survives "$id"
}

# gateway_setup PROVIDER KEYPREFIX: the model gateway's side (issue 19): a
# CA made here with the openssl CLI and the upstream's certificate for
# 127.0.0.1 signed by it (and another CA, corral-other-ca, that is not
# it), the mock model over TLS, a canary key in the operator's 0600 key
# file, the repository. Sets MOCK_PORT, CANARY, OUT (corral's output,
# kept by `c`); gateway_config CA-FILE [SPEND_CAP] writes the operator's
# one [provider PROVIDER] section.
gateway_setup() {
	GW_PROVIDER=$1
	command -v openssl >/dev/null || { echo "openssl is required"; exit 1; }
	command -v nsenter >/dev/null || { echo "nsenter is required (util-linux)"; exit 1; }
	OUT=$TMP/corral-output.log
	: >"$OUT"
	local ca
	for ca in corral-test-ca corral-other-ca; do
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$ca" \
			-keyout "$TMP/$ca.key" -out "$TMP/$ca.pem" 2>/dev/null ||
			{ echo "openssl failed"; exit 1; }
	done
	openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 \
		-keyout "$TMP/server.key" -out "$TMP/server.csr" 2>/dev/null &&
	printf 'subjectAltName = IP:127.0.0.1\n' >"$TMP/san.ext" &&
	openssl x509 -req -in "$TMP/server.csr" -CA "$TMP/corral-test-ca.pem" \
		-CAkey "$TMP/corral-test-ca.key" -CAcreateserial -days 2 \
		-extfile "$TMP/san.ext" -out "$TMP/server.pem" 2>/dev/null ||
		{ echo "openssl could not sign the server certificate"; exit 1; }
	python3 "$CORRAL_SRC/tests/agents/mock_model.py" --log "$TMP/mock.log" \
		--tls "$TMP/server.pem" "$TMP/server.key" >"$TMP/port" &
	MOCK_PID=$!
	trap 'kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null; cleanup' EXIT
	poll test -s "$TMP/port" || { echo "the mock model did not start"; exit 1; }
	MOCK_PORT=$(cat "$TMP/port")
	touch "$TMP/mock.log"
	CANARY="$2-canary-$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')"
	mkdir -p "$XDG_CONFIG_HOME/corral"
	( umask 077; printf '%s\n' "$CANARY" >"$XDG_CONFIG_HOME/corral/$1.key" )
	gateway_config "$TMP/corral-test-ca.pem"
	new_repo "$TMP/repo"
	echo "a repository" >"$TMP/repo/README"
	git -C "$TMP/repo" add README && git -C "$TMP/repo" commit -q -m base
}
gateway_config() {
	{
		printf '[provider %s]\nupstream = https://127.0.0.1:%s\n' \
			"$GW_PROVIDER" "$MOCK_PORT"
		printf 'key_file = %s\nca_file = %s\n' \
			"$XDG_CONFIG_HOME/corral/$GW_PROVIDER.key" "$1"
		[ -z "${2:-}" ] || printf 'spend_cap = %s\n' "$2"
	} >"$XDG_CONFIG_HOME/corral/config"
}
# mock_n: how many requests reached the mock (not its {"done": N} lines)
mock_n() { jq -s '[.[] | select(.method != null)] | length' "$TMP/mock.log"; }
# c ARGS...: corral, its output kept for the canary check too
c() { "$CORRAL" "$@" 2> >(tee -a "$OUT" >&2) | tee -a "$OUT"; }
# zone_pid ID COMM: a process of the lease's zone whose command line has
# COMM (empty when none)
zone_pid() {
	local uid p
	uid=$(js "$1" | jq -r '[.receipts[] | select(.kind == "sandbox")][0].fields.uid')
	[ -n "$uid" ] && [ "$uid" != null ] || return 0
	for p in $(uid_procs "$uid"); do
		tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "$2" && echo "$p"
	done | tail -1
}
# canary_in_zone ID: the canary in no zone process's environ or cmdline
# (the placeholder PLACEHOLDER in one: the check reads them)
canary_in_zone() {
	local uid p leak=0 seen=0
	uid=$(js "$1" | jq -r '[.receipts[] | select(.kind == "sandbox")][0].fields.uid')
	for p in $(uid_procs "$uid"); do
		grep -aqF -- "$CANARY" "/proc/$p/environ" "/proc/$p/cmdline" 2>/dev/null && leak=1
		grep -aqF -- "$PLACEHOLDER" "/proc/$p/environ" 2>/dev/null && seen=1
	done
	check "the canary key is in no zone process's environment or command line" test "$leak" = 0
	check "... where the placeholder is (the check reads them)" test "$seen" = 1
}
