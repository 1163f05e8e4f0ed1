#!/usr/bin/python3
# smtpd.py: a real SMTP relay on loopback for the mail tests (Debian's aiosmtpd).
#
#   smtpd.py --dir DIR --port-file FILE [--port N] [--stall-file FILE]
#            [--stall-quit-file FILE]
#
# Listens on 127.0.0.1 (port 0: a free one), writes the port to FILE once it
# listens, and stores each accepted message as DIR/NNNN.eml (the bytes of
# DATA as received, dot-unstuffed) with DIR/NNNN.json (the envelope).
# RCPT TO an address @reject.test is refused with 550. While the stall file
# exists, DATA is received but not answered for 60 s (DIR/stalling is
# touched when that starts) and then refused with 451: a stalled message
# is never stored. While the stall-quit file exists, QUIT is not answered
# for 60 s (DIR/quitting is touched). It needs Debian's python3-aiosmtpd: run it with
# /usr/bin/python3.
import argparse
import asyncio
import json
import os
import signal

from aiosmtpd.smtp import SMTP


class Handler:
    def __init__(self, directory, stall_file, stall_quit_file):
        self.dir = directory
        self.stall_file = stall_file
        self.stall_quit_file = stall_quit_file

    async def handle_QUIT(self, server, session, envelope):
        if self.stall_quit_file and os.path.exists(self.stall_quit_file):
            open(os.path.join(self.dir, "quitting"), "w").close()
            await asyncio.sleep(60)
        return "221 Bye"

    async def handle_RCPT(self, server, session, envelope, address, options):
        if address.lower().endswith("@reject.test"):
            return "550 5.1.1 <%s>: no such user here" % address
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.stall_file and os.path.exists(self.stall_file):
            with open(os.path.join(self.dir, "stalling"), "w") as f:
                f.write("%s\n" % envelope.mail_from)
            await asyncio.sleep(60)
            return "451 4.3.0 stalled by the test"
        n = len([f for f in os.listdir(self.dir) if f.endswith(".eml")]) + 1
        base = os.path.join(self.dir, "%04d" % n)
        with open(base + ".json.tmp", "w") as f:
            json.dump({"mail_from": envelope.mail_from,
                       "rcpt_tos": envelope.rcpt_tos}, f)
        os.rename(base + ".json.tmp", base + ".json")
        with open(base + ".eml.tmp", "wb") as f:
            f.write(envelope.original_content)
        os.rename(base + ".eml.tmp", base + ".eml")
        return "250 2.0.0 OK queued as %04d" % n


async def serve(args):
    loop = asyncio.get_running_loop()
    os.makedirs(args.dir, exist_ok=True)
    handler = Handler(args.dir, args.stall_file, args.stall_quit_file)
    server = await loop.create_server(
        lambda: SMTP(handler, hostname="relay.test", loop=loop),
        host="127.0.0.1", port=args.port, reuse_address=True)
    port = server.sockets[0].getsockname()[1]
    with open(args.port_file + ".tmp", "w") as f:
        f.write("%d\n" % port)
    os.rename(args.port_file + ".tmp", args.port_file)
    stop = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set_result, None)
    await stop
    server.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--stall-file")
    ap.add_argument("--stall-quit-file")
    asyncio.run(serve(ap.parse_args()))


if __name__ == "__main__":
    main()
