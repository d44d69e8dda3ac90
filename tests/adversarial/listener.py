#!/usr/bin/env python3
# listener.py: the adversarial suite's host-side network canaries. It
# listens where a sandbox escape would land -- TCP on 127.0.0.1 and [::1],
# UDP on 127.0.0.1, an abstract unix socket, unix sockets standing in for
# the SSH agent and a Docker daemon -- and appends one line to LOG for every
# connection or datagram. The suite's verdict: LOG stays empty.
#
#   listener.py LOG PORT ABSTRACT_NAME SSH_SOCK DOCKER_SOCK READY_FILE
import os
import selectors
import socket
import sys


def main():
    log, port, abstract, ssh, docker, ready = sys.argv[1:7]
    port = int(port)
    sel = selectors.DefaultSelector()
    socks = []

    def listen(family, kind, addr, name):
        s = socket.socket(family, kind)
        if family != socket.AF_UNIX:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind(addr)
        if kind == socket.SOCK_STREAM:
            s.listen(64)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, (name, kind))
        socks.append(s)

    listen(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", port), "tcp4")
    listen(socket.AF_INET6, socket.SOCK_STREAM, ("::1", port), "tcp6")
    listen(socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", port), "udp4")
    listen(socket.AF_UNIX, socket.SOCK_STREAM, "\0" + abstract, "abstract")
    listen(socket.AF_UNIX, socket.SOCK_STREAM, ssh, "ssh-agent")
    listen(socket.AF_UNIX, socket.SOCK_STREAM, docker, "docker")
    with open(ready, "w") as f:
        f.write("ready\n")
    with open(log, "a", buffering=1) as out:
        while True:
            for key, _ in sel.select():
                s = key.fileobj
                name, kind = key.data
                if kind == socket.SOCK_DGRAM:
                    data, peer = s.recvfrom(4096)
                    out.write("%s datagram from %r: %r\n" % (name, peer, data[:64]))
                    continue
                try:
                    c, peer = s.accept()
                except BlockingIOError:
                    continue
                c.settimeout(0.2)
                try:
                    data = c.recv(256)
                except OSError:
                    data = b""
                out.write("%s connection from %r: %r\n" % (name, peer, data[:64]))
                c.close()


if __name__ == "__main__":
    main()
