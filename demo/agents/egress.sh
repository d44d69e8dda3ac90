#!/bin/sh
# Demo agent (sandboxed): tries to reach a name outside the lease's
# allowlist. The lease's proxy (HTTPS_PROXY) refuses it and the receipt
# records the attempt; without a proxy the sandbox has no network at all.
# The name is .invalid (RFC 2606): it never reaches a real host.
printf '\033]2;demo: egress\007'
printf 'Fetching https://example.invalid/ for a "dependency"...\n'
if [ ! -x /usr/bin/curl ]; then
	printf '\033[33mno curl in this sandbox: nothing to try\033[0m\n'
elif [ -n "${HTTPS_PROXY:-}" ]; then
	/usr/bin/curl -fsS -m 10 -o /dev/null https://example.invalid/ 2>&1
	printf '\033[31mcurl exit %d: the lease'"'"'s proxy refused it (see the receipt)\033[0m\n' $?
else
	/usr/bin/curl -fsS -m 10 -o /dev/null https://example.invalid/ 2>&1
	printf '\033[31mcurl exit %d: this sandbox has no network\033[0m\n' $?
fi
printf 'Carrying on without it; nothing changed.\n'
exit 0
