#!/usr/bin/python3
"""A small, strict New Session Manager server for jackhost's tests.

It follows the NSM API document (https://new-session-manager.jackaudio.org/api/index.html,
API 1.1) to the letter, with python3-liblo: an OSC implementation independent of jackhost's.
It launches the client with NSM_URL set, answers its announce, sends /nsm/client/open, and
checks every message the client sends: the announce first and before any JACK client, the
type strings, one source port, replies only to what was asked, informational messages only
for the capabilities announced. Every breach is a "violation" event.

Events go to stdout as JSON lines; commands come on stdin, one a line:
  save | loaded | show | hide | open-again | flood N | term | vanish
"vanish" closes the socket and exits at once, leaving the client running (a crashed manager).

Usage: nsm_server.py --client PATH --path SESSION_PATH --name DISPLAY --id CLIENT_ID
                     --log FILE [--jack-server NAME] [--open-types sss|ss] [--env K=V ...]
"""
import argparse
import json
import os
import re
import select
import signal
import subprocess
import sys
import time

import liblo

ERROR_CODES = range(-10, 0)
CLIENT_CAPABILITIES = {"switch", "dirty", "progress", "message", "optional-gui"}
SERVER_CAPABILITIES = ":server-control:broadcast:optional-gui:"


def emit(event, **fields):
    fields["event"] = event
    fields["t"] = round(time.monotonic(), 3)
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


class Manager:
    def __init__(self, options):
        self.options = options
        self.server = liblo.Server(proto=liblo.UDP)
        self.server.add_method(None, None, self.received)
        self.client = None
        self.client_port = None
        self.capabilities = set()
        self.announced = False
        self.awaiting = set()  # paths the client owes a reply to
        self.process = None

    def violation(self, text):
        emit("violation", text=text)

    def url(self):
        return "osc.udp://127.0.0.1:%d/" % self.server.port

    def launch(self):
        environment = dict(os.environ)
        environment["NSM_URL"] = self.url()
        for pair in self.options.env:
            key, _, value = pair.partition("=")
            environment[key] = value
        log = open(self.options.log, "wb")
        self.process = subprocess.Popen([self.options.client], env=environment, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        emit("launched", pid=self.process.pid, url=self.url())

    def jack_ports(self):
        if not self.options.jack_server:
            return None
        try:
            result = subprocess.run(["jack_lsp", "-s", self.options.jack_server], capture_output=True, text=True, timeout=10,
                                    env=dict(os.environ, JACK_NO_START_SERVER="1"))
            return result.stdout.split("\n")
        except subprocess.TimeoutExpired:
            return None

    def send(self, path, *arguments):
        message = liblo.Message(path, *arguments)
        liblo.send(self.client, message)

    def received(self, path, arguments, types, source):
        emit("message", path=path, types=types, args=[a if not isinstance(a, bytes) else a.hex() for a in arguments], port=source.port)
        if self.client_port is not None and source.port != self.client_port:
            self.violation("%s came from port %d, not the announce's %d" % (path, source.port, self.client_port))
        if not self.announced:
            if path != "/nsm/server/announce":
                self.violation("the first message was %s, not /nsm/server/announce" % path)
                return
            self.announce(arguments, types, source)
            return
        handler = {
            "/reply": self.reply,
            "/error": self.error,
            "/nsm/client/message": self.message,
            "/nsm/client/progress": self.progress,
            "/nsm/client/gui_is_shown": self.gui,
            "/nsm/client/gui_is_hidden": self.gui,
            "/nsm/client/is_dirty": self.dirty,
            "/nsm/client/is_clean": self.dirty,
        }.get(path)
        if handler is None:
            self.violation("the client sent %s, which the API does not have" % path)
            return
        handler(path, arguments, types)

    def announce(self, arguments, types, source):
        if types != "sssiii":
            self.violation("announce types %r, not 'sssiii'" % types)
            return
        name, capabilities, executable, major, minor, pid = arguments
        if not re.fullmatch(r":([a-z-]+:)*", capabilities):
            self.violation("capabilities %r are not ':a:b:'" % capabilities)
        self.capabilities = set(filter(None, capabilities.split(":")))
        for unknown in self.capabilities - CLIENT_CAPABILITIES:
            self.violation("unknown capability %r" % unknown)
        if executable != self.options.client:
            self.violation("executable %r is not the one launched, %r" % (executable, self.options.client))
        if major != 1:
            self.violation("API major %d is not 1" % major)
        if pid != self.process.pid:
            self.violation("pid %d is not the launched client's %d" % (pid, self.process.pid))
        ports = self.jack_ports()
        if ports is not None and any(port.startswith(name + ":") or port.startswith(self.options.id + ":") for port in ports):
            self.violation("a JACK client existed at the announce, before the open")
        self.announced = True
        self.client = source.url
        self.client_port = source.port
        liblo.send(self.client, liblo.Message("/reply", "/nsm/server/announce", "Acknowledged.", "jackhost-test-nsm", SERVER_CAPABILITIES))
        time.sleep(0.3)
        ports = self.jack_ports()
        if ports is not None and any(port.startswith(self.options.id + ":") for port in ports):
            self.violation("a JACK client named by the client id existed before the open")
        self.open()

    def open(self):
        if self.options.open_types == "ss":
            self.send("/nsm/client/open", self.options.path, self.options.name)
        else:
            self.send("/nsm/client/open", self.options.path, self.options.name, self.options.id)
        self.awaiting.add("/nsm/client/open")
        emit("sent", path="/nsm/client/open")

    def reply(self, path, arguments, types):
        if types != "ss":
            self.violation("/reply types %r, not 'ss'" % types)
            return
        request = arguments[0]
        if request not in self.awaiting:
            self.violation("/reply to %s, which was not asked for" % request)
        self.awaiting.discard(request)
        if request == "/nsm/client/open":
            ports = self.jack_ports()
            has_client = ports is not None and any(port.startswith(self.options.id + ":in_") for port in ports)
            emit("opened", jack_client=has_client)
            if ports is not None and not has_client:
                self.violation("the open was answered, but JACK has no client named %s" % self.options.id)

    def error(self, path, arguments, types):
        if types != "sis":
            self.violation("/error types %r, not 'sis'" % types)
            return
        request, code, text = arguments
        if request not in self.awaiting:
            self.violation("/error to %s, which was not asked for" % request)
        if code not in ERROR_CODES:
            self.violation("/error code %d is not one of the API's" % code)
        self.awaiting.discard(request)

    def message(self, path, arguments, types):
        if "message" not in self.capabilities:
            self.violation("/nsm/client/message without :message:")
        if types != "is" or not 0 <= arguments[0] <= 3:
            self.violation("/nsm/client/message %r %r is not a priority 0-3 and a string" % (types, arguments))

    def progress(self, path, arguments, types):
        if "progress" not in self.capabilities:
            self.violation("/nsm/client/progress without :progress:")
        if types != "f" or not 0.0 <= arguments[0] <= 1.0:
            self.violation("/nsm/client/progress %r %r is not a float 0-1" % (types, arguments))

    def gui(self, path, arguments, types):
        if "optional-gui" not in self.capabilities:
            self.violation("%s without :optional-gui:" % path)
        if types != "":
            self.violation("%s has arguments %r" % (path, types))

    def dirty(self, path, arguments, types):
        if "dirty" not in self.capabilities:
            self.violation("%s without :dirty:" % path)

    def command(self, line):
        words = line.split()
        if not words:
            return True
        if words[0] == "save":
            self.awaiting.add("/nsm/client/save")
            self.send("/nsm/client/save")
        elif words[0] == "loaded":
            self.send("/nsm/client/session_is_loaded")
        elif words[0] == "show":
            self.send("/nsm/client/show_optional_gui")
        elif words[0] == "hide":
            self.send("/nsm/client/hide_optional_gui")
        elif words[0] == "open-again":
            self.awaiting.add("/nsm/client/open")
            self.send("/nsm/client/open", self.options.path, self.options.name, self.options.id)
        elif words[0] == "flood":
            for index in range(int(words[1])):
                self.send("/nsm/unknown/path%d" % (index % 7), index, "x" * (index % 40))
        elif words[0] == "term":
            self.process.send_signal(signal.SIGTERM)
        elif words[0] == "vanish":
            emit("vanished")
            self.server.free()
            os._exit(0)
        emit("done", command=words[0])
        return True

    def run(self):
        self.launch()
        while True:
            self.server.recv(20)
            if self.process.poll() is not None:
                # Read what the client sent last before saying it exited.
                while self.server.recv(50):
                    pass
                emit("exit", status=self.process.returncode, awaiting=sorted(self.awaiting))
                return
            readable, _, _ = select.select([sys.stdin], [], [], 0)
            if readable:
                line = sys.stdin.readline()
                if not line:
                    self.process.send_signal(signal.SIGTERM)
                    self.process.wait(30)
                    continue
                self.command(line)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--client", required=True)
    parser.add_argument("--path", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--id", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--jack-server")
    parser.add_argument("--open-types", default="sss")
    parser.add_argument("--env", action="append", default=[])
    Manager(parser.parse_args()).run()


if __name__ == "__main__":
    main()
