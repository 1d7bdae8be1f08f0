#!/usr/bin/env python3
"""A DNS server on 127.0.0.1:53 (UDP and TCP) that answers every query NXDOMAIN
(or SERVFAIL with argv[1] == "servfail"), so that a resolver inside a private
network namespace reports a name that does not exist ("Name or service not
known") without any query leaving the machine. Exits after argv[2] seconds."""
import os, socket, sys, threading

RCODE = 2 if len(sys.argv) > 1 and sys.argv[1] == "servfail" else 3
LIFE = float(sys.argv[2]) if len(sys.argv) > 2 else 120

def reply(q):
    if len(q) < 12:
        return None
    flags = 0x8000 | (q[2] & 0x79) << 8 | 0x0080 | RCODE   # QR, opcode+RD copied, RA
    # header: same id, flags, qdcount copied, no answers; question echoed
    return q[:2] + flags.to_bytes(2, "big") + q[4:6] + b"\0\0\0\0\0\0" + q[12:]

def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 53))
    while True:
        q, addr = s.recvfrom(4096)
        r = reply(q)
        if r:
            s.sendto(r, addr)

def tcp():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 53))
    s.listen(8)
    while True:
        c, _ = s.accept()
        try:
            n = int.from_bytes(c.recv(2), "big")
            r = reply(c.recv(n))
            if r:
                c.sendall(len(r).to_bytes(2, "big") + r)
        finally:
            c.close()

threading.Timer(LIFE, lambda: os._exit(0)).start()
threading.Thread(target=tcp, daemon=True).start()
udp()
