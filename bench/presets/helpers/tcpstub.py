#!/usr/bin/env python3
"""A loopback TCP server for the cases an HTTP stub cannot make.

  tcpstub.py slam PORTFILE [LIFE]   accepts and closes at once (a server that hangs up)
  tcpstub.py mute PORTFILE [LIFE]   accepts and never says a word (a server that stalls)
  tcpstub.py eof  PORTFILE [LIFE]   reads the client's first words, then hangs up cleanly (FIN)
  tcpstub.py full PORTFILE [LIFE]   never accepts, its backlog filled by itself, so the
                                     kernel drops new SYNs: connecting times out

Binds 127.0.0.1 on a free port, writes the port to PORTFILE, exits after LIFE s."""
import os, socket, sys, threading, time

mode, portfile = sys.argv[1], sys.argv[2]
life = float(sys.argv[3]) if len(sys.argv) > 3 else 300
threading.Timer(life, lambda: os._exit(0)).start()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(0 if mode == "full" else 64)
if mode == "full":
    fillers = []
    for _ in range(4):  # fill the accept queue; later SYNs are dropped
        f = socket.socket()
        f.setblocking(False)
        try:
            f.connect(s.getsockname())
        except BlockingIOError:
            pass
        fillers.append(f)
    time.sleep(0.5)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
held = []
while mode == "full":
    time.sleep(3600)
while True:
    c, _ = s.accept()
    if mode == "slam":
        c.close()
    elif mode == "eof":
        c.settimeout(1)
        try:
            c.recv(4096)
        except OSError:
            pass
        c.shutdown(socket.SHUT_RDWR)
        c.close()
    else:
        held.append(c)   # keep it open, silent
