#!/usr/bin/env python3
"""JackHost's side-by-side benchmarks (issue 6). Run it through scripts/bench, which installs
the peers, builds everything and guarantees that every jackd it starts is stopped.

Every figure is a ratio against a peer measured in the same run: subject and peer alternate
round by round (A B A B ..., the order flipped each round) and the table shows medians over
the rounds. Absolute numbers appear only as supporting data next to the ratios.
"""
import argparse
import datetime
import json
import os
import platform
import math
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

RATE = 48000
# jack_capture's input ports are named jack_capture:input1 ... inputN.
JACK_CAPTURE_LAST_PORT = "jack_capture:input{}"


# ----------------------------------------------------------------------------------------
# Process bookkeeping: every child's pid is listed in a file that scripts/bench's trap reads,
# so a crash or Ctrl-C still stops every jackd and client by pid (TERM, then KILL).
# A pid is removed from the list as soon as it has been reaped, so the trap never signals a
# recycled pid.

class Processes:
    def __init__(self, pidfile: Path):
        self.pidfile = pidfile
        self.live: dict[int, str] = {}

    def _write(self):
        tmp = self.pidfile.with_suffix(".tmp")
        tmp.write_text("".join(f"{kind} {pid}\n" for pid, kind in self.live.items()))
        tmp.replace(self.pidfile)

    def start(self, cmd, kind="client", env=None, stdout=None, stderr=None, cwd=None):
        proc = subprocess.Popen([str(c) for c in cmd], env=env, stdout=stdout or subprocess.DEVNULL,
                                stderr=stderr or subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=cwd)
        self.live[proc.pid] = kind
        self._write()
        return proc

    def reaped(self, proc):
        self.live.pop(proc.pid, None)
        self._write()

    def wait(self, proc, timeout):
        """Waits for exit; on timeout kills the process. Returns the exit code or None (killed)."""
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = None
        self.reaped(proc)
        return code

    def stop(self, proc, grace=10.0, on_kill=None):
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                if on_kill:
                    on_kill()
        self.reaped(proc)


class Bench:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.work = Path(args.work)
        self.procs = Processes(Path(args.pidfile))
        self.server_serial = 0
        self.env = dict(os.environ, JACK_NO_START_SERVER="1")
        self.rows = []        # table rows
        self.details = []     # markdown sections with supporting data
        self.freewheel_times = []
        self.callback_fair_ratio = None   # case 2: jackhost's p99 over cfair's, for --check-ratio
        self.crashes = {}           # peer -> crashed freewheel runs (retried)   # (tag, command, seconds) of every freewheel run, for the record
        self.started = time.monotonic()
        # Freewheel recordings go to RAM (tmpfs), so that both recorders are measured, not the disk.
        self.shm = Path(args.shm)

    def log(self, text):
        stamp = f"[{time.monotonic() - self.started:6.1f}s]"
        print(f"bench {stamp} {text}", file=sys.stderr, flush=True)

    def row(self, case, measure, subject, peer, ratio, target, verdict):
        self.rows.append((case, measure, subject, peer, ratio, target, verdict))

    # ------------------------------------------------------------------------------------
    # Servers

    def start_server(self, period, channels, playback=2, realtime=False):
        """A private dummy jackd. realtime=True runs it with `-R` (SCHED_FIFO at jackd's default
        priority, 10, and its clients' process threads at 5): what a real setup does."""
        self.server_serial += 1
        name = f"{self.args.server_prefix}{self.server_serial}"
        log = open(self.work / f"{name}.log", "w")
        cmd = ["jackd", "-n", name, "-R" if realtime else "--no-realtime", "-d", "dummy", "-r", str(RATE),
               "-p", str(period), "-C", str(channels), "-P", str(playback)]
        proc = self.procs.start(cmd, kind="jackd", env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self.procs.reaped(proc)
                text = Path(log.name).read_text(errors="replace")
                if "Too many servers already active" in text:
                    raise RuntimeError("jack2's registry has 8 servers already (stale slots of killed servers?); "
                                       "see `python3 Benchmarks/harness/jack_registry.py`")
                raise RuntimeError(f"jackd {name} exited; see {log.name}")
            if subprocess.run(["jack_lsp", "-s", name], env=self.env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0:
                return (name, proc)
            time.sleep(0.02)
        self.procs.stop(proc, grace=4.0, on_kill=self.clear_registry)
        raise RuntimeError(f"jackd {name} did not come up")

    def stop_server(self, server):
        self.freewheel(server, False)
        self.kill_server(server)

    def kill_server(self, server):
        """SIGTERM, a few seconds, SIGKILL. A killed jackd leaves its slot in jack2's 8-slot registry,
        which would soon stop every new server on the machine: free the slots of our dead servers."""
        self.procs.stop(server[1], grace=4.0, on_kill=self.clear_registry)

    def clear_registry(self):
        subprocess.run([sys.executable, str(Path(__file__).with_name("jack_registry.py")), "--clear-dead",
                        self.args.server_prefix], check=False)

    def freewheel(self, server, on):
        subprocess.run(["jack_freewheel", "y" if on else "n"], env=dict(self.env, JACK_DEFAULT_SERVER=server[0]),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)

    def wait_connected(self, server, port, proc, timeout=20):
        """Waits until `port` (CLIENT:in_N) exists and has a connection."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            # Bounded: a jack2 server can deadlock writing a notification to a client that is
            # closing (seen once here: its request thread in sock_alloc_send_pskb, jack_lsp waiting
            # for the reply for ten minutes). The case then fails instead of hanging the run.
            try:
                out = subprocess.run(["jack_lsp", "-s", server[0], "-c", port], env=self.env, capture_output=True,
                                     text=True, timeout=10).stdout
            except subprocess.TimeoutExpired:
                self.log(f"jack_lsp on {server[0]} did not answer in 10 s: the server is stuck")
                return False
            if any(line.startswith("   ") for line in out.splitlines()):
                return True
            time.sleep(0.02)
        return False

    # ------------------------------------------------------------------------------------
    # Clients

    def jackhost(self, *arguments):
        return [self.args.jackhost, *arguments]

    def jackhost_env(self, shim=True):
        env = dict(self.env)
        if shim:
            env["LD_PRELOAD"] = self.args.close_shim
        return env

    def run_client(self, cmd, env, timeout, tag):
        out = self.work / f"{tag}.out"
        err = self.work / f"{tag}.err"
        with open(out, "w") as o, open(err, "w") as e:
            proc = self.procs.start(cmd, env=env, stdout=o, stderr=e)
            code = self.procs.wait(proc, timeout)
        return code, out.read_text(errors="replace"), err.read_text(errors="replace")

    # ------------------------------------------------------------------------------------
    # Helpers

    @staticmethod
    def alternate(round_index, subjects):
        """A B, then B A: each subject runs first in every other round."""
        return subjects if round_index % 2 == 0 else list(reversed(subjects))

    @staticmethod
    def median(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None


def fmt(value, digits=3):
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return value
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1e9:
        return f"{value / 1e9:.{digits}g} G"
    if magnitude >= 1e6:
        return f"{value / 1e6:.{digits}g} M"
    if magnitude >= 1e4:
        return f"{value / 1e3:.{digits}g} k"
    return f"{value:.{digits}g}"


def parse_callback(text):
    # Durations in microseconds to a tenth (CallbackTimer and callback_timer.h: 0.1 us buckets).
    number = r"(\d+(?:\.\d+)?)"
    m = re.search(rf"callback_us count=(\d+) p50={number} p99={number} max={number}(?: period_us=(\d+))?", text)
    if not m:
        return None
    return {k: float(v) if v is not None else None for k, v in zip(("count", "p50", "p99", "max", "period"), m.groups())}


# ----------------------------------------------------------------------------------------
# Case 0: exit with many channels (found while building case 1: a jack2 deadlock at close)

def case_exit(b: Bench):
    b.log("case 0: does jackhost exit with 64 channels (no shim)?")
    server = b.start_server(256, 64)
    try:
        timeout = 3 if b.quick else 8
        results = {}
        for label, cmd, env in [
            ("jackhost", b.jackhost("run", "--meter", "-s", server[0], "-n", "jhb_exit", "-c", "64", "--duration", "0.2"),
             b.jackhost_env(shim=False)),
            ("jackhost + close-order shim", b.jackhost("run", "--meter", "-s", server[0], "-n", "jhb_exit2", "-c", "64",
                                                       "--duration", "0.2"), b.jackhost_env(shim=True)),
            ("cmeter", [b.args.cmeter, "-s", server[0], "-n", "jhb_cexit", "-c", "64", "--frames", "9600"], b.env),
            ("cmeter --metadata", [b.args.cmeter, "-s", server[0], "-n", "jhb_cexit2", "-c", "64", "--frames", "9600",
                                   "--metadata"], b.env),
        ]:
            start = time.monotonic()
            code, _, _ = b.run_client(cmd, env, timeout, f"exit-{label.split()[0]}-{len(results)}")
            results[label] = (code, time.monotonic() - start)
        def verdict(label):
            code, seconds = results[label]
            return f"exit {code} in {seconds:.1f} s" if code is not None else f"hung, killed after {timeout} s"
        ok = results["jackhost"][0] == 0
        b.row("0. Exit, 64 ch, `run --meter -d 0.2`", "exits by itself", verdict("jackhost"), "cmeter: " + verdict("cmeter"),
              "-", "exits", "PASS" if ok else "FAIL")
        b.details.append("### 0. Exit with 64 channels\n\n"
                         "Found while building case 1. Each client runs 0.2 s on a private server (64 capture ports) "
                         f"and must exit by itself within {timeout} s.\n\n"
                         "| client | result |\n|---|---|\n" +
                         "".join(f"| {label} | {verdict(label)} |\n" for label in results) +
                         "\nA hang here is jack2's close-time deadlock with port metadata (see Findings). Every other "
                         "jackhost run in this report is made with `LD_PRELOAD=close_order_shim.so`, which only "
                         "unregisters the client's ports before `jack_client_close`; the real-time path is untouched.\n")
    finally:
        b.stop_server(server)


# ----------------------------------------------------------------------------------------
# Case 1: freewheel throughput with a real-time peak meter

# cmeter's main thread polls for the end every 1 ms by default (~900 wakeups/s); jackhost's idle
# threads (main loop, monitor, display) wake ~125 times a second in all. The matched peer polls at
# the rate measured from jackhost's threads in the same run (see FINDINGS.md, F7, for why that
# matters here); this is the starting value, used until the first jackhost run has been measured.
MATCHED_POLL_US = 8000


def voluntary_switches(pid):
    """{thread id: voluntary context switches} of a live process, or {} once it is gone."""
    counts = {}
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            for line in (task / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    counts[task.name] = int(line.split()[1])
    except OSError:
        pass
    return counts


def case_freewheel(b: Bench):
    period = 64
    # Steady-state cycles per second while jackd freewheels: every peer's process callback is timestamped
    # at entry (C-ABI clients by Benchmarks/peers/cycle_clock_shim.c through LD_PRELOAD, the same code
    # for jackhost and cmeter; pymeter, whose cffi dlopen the shim cannot see, by itself the same way),
    # and rate = 1 / the median interval between freewheel cycles. A preemption moves one interval, not
    # the result. Each run: start the client, wait until it is connected, freewheel for `seconds`,
    # stop freewheeling, then SIGTERM the client. Freewheel is off whenever a client opens or closes, so
    # one server serves all the runs of a channel count (jack2 1.9.21 breaks when a client closes while
    # it freewheels). Peers: jackhost, cmeter_matched (the C client at jackhost's wakeup rate: the
    # verdict), cmeter (as it is, 1 ms polls), cmeter_aa (cmeter again: the noise floor), pymeter.
    rounds, seconds = (1, 0.5) if b.quick else (7, 1.5)
    peers = ["jackhost", "cmeter_matched", "cmeter", "cmeter_aa", "pymeter"]
    section = ["### 1. Freewheel throughput, 64 frames, real-time peak meter\n",
               "Steady-state cycles per second while jackd freewheels. Every peer's process callback is timestamped "
               "at entry: jackhost and the C client by `Benchmarks/peers/cycle_clock_shim.c` (LD_PRELOAD, the same code "
               "for both), the Python client by itself (cffi opens libjack with dlopen, which the shim cannot see). "
               "Rate = 1 / the median interval between freewheel cycles, so a preemption moves one interval, not the "
               f"result. Each run freewheels for {seconds:g} s of wall time on a server shared by all runs of a channel "
               "count (freewheel is off whenever a client opens or closes). Peers, in alternating order: `jackhost run "
               "--meter`; `cmeter_matched`, the C client with its main thread polling at the rate at which jackhost's "
               "threads other than the process thread wake up, measured from /proc in this run's first jackhost run "
               "of each channel count (finding F7 shows why this changes the rate on this VM); it decides the verdict; "
               "`cmeter` as it is (main thread polls every 1 ms, ~900 wakeups/s); `cmeter_aa`, cmeter again, whose "
               "ratio to cmeter is this run's noise floor; `pymeter`. Ratios are medians of per-round ratios, "
               f"[min-max] over {rounds} rounds.\n",
               "| channels | peer | cycles/s per round | median |", "|---|---|---|---|"]
    spread = lambda xs: f" [{min(xs):.2f}-{max(xs):.2f}]" if xs else ""
    wakeup_notes = []
    for channels in (2, 8, 64):
        b.log(f"case 1: freewheel, {channels} channels")
        rates = {peer: [] for peer in peers}
        poll = {"us": MATCHED_POLL_US, "wakeups": None}
        server = b.start_server(period, channels)
        try:
            for r in range(rounds):
                for peer in b.alternate(r, peers):
                    rates[peer].append(steady_freewheel_rate(b, server, peer, channels, seconds,
                                                             f"fw-{peer}-{channels}-{r}", poll))
        finally:
            b.stop_server(server)
        section_poll = (f"{poll['wakeups']:.0f} wakeups/s -> cmeter_matched polls every {poll['us']} us"
                        if poll["wakeups"] else f"not measured; cmeter_matched polls every {poll['us']} us")
        wakeup_notes.append(f"{channels} channels: jackhost's other threads {section_poll}")

        def ratios(top, bottom):
            return [x / y for x, y in zip(rates[top], rates[bottom]) if x and y]
        for peer in peers:
            section.append(f"| {channels} | {peer} | " + ", ".join(fmt(v) for v in rates[peer]) +
                           f" | {fmt(b.median(rates[peer]))} |")
        label = f"1. Freewheel, {channels} ch x 64 fr, meter"
        target = 0.98
        matched = ratios("jackhost", "cmeter_matched")
        ratio = b.median(matched)
        b.row(label, "cycles/s vs C at jackhost's wakeup rate",
              fmt(b.median(rates["jackhost"])), "C " + fmt(b.median(rates["cmeter_matched"])),
              (f"{ratio:.3f}{spread(matched)}" if ratio else "n/a"), f">= {target}",
              "PASS" if ratio and ratio >= target else "FAIL")
        direct = ratios("jackhost", "cmeter")
        b.row(label, "cycles/s vs C polling every 1 ms",
              fmt(b.median(rates["jackhost"])), "C " + fmt(b.median(rates["cmeter"])),
              (f"{b.median(direct):.3f}{spread(direct)}" if direct else "n/a"), "(info)", "-")
        effect = ratios("cmeter_matched", "cmeter")
        b.row(label, "wakeup effect: C at jackhost's wakeup rate vs C polling every 1 ms (F7)", "-",
              "C " + fmt(b.median(rates["cmeter_matched"])),
              (f"{b.median(effect):.3f}{spread(effect)}" if effect else "n/a"), "(info)", "-")
        aa = ratios("cmeter_aa", "cmeter")
        b.row(label, "noise floor: C vs C (A/A)", "-", "C " + fmt(b.median(rates["cmeter_aa"])),
              (f"{b.median(aa):.3f}{spread(aa)}" if aa else "n/a"), "~1", "(info)")
        python = ratios("jackhost", "pymeter")
        b.row(label, "cycles/s vs Python", fmt(b.median(rates["jackhost"])), "Py " + fmt(b.median(rates["pymeter"])),
              (f"{b.median(python):.2f}" if python else "n/a"), "(info)", "-")
    section.append("\nWakeups measured: " + "; ".join(wakeup_notes) + ".")
    b.details.append("\n".join(section) + "\n")


def steady_freewheel_rate(b: Bench, server, peer, channels, seconds, tag, poll):
    """One run of case 1 (see case_freewheel); returns cycles/s or None. The first jackhost run also
    measures how often jackhost's threads other than the process thread wake up, and sets
    poll["us"] so that cmeter_matched's main thread wakes as often."""
    name = f"jhb_{peer}"
    clock_file = b.work / f"{tag}.cycles"
    clock_file.unlink(missing_ok=True)
    if peer == "jackhost":
        env = b.jackhost_env()
        env["LD_PRELOAD"] = f"{b.args.cycle_shim} {env['LD_PRELOAD']}"
        cmd = b.jackhost("run", "--meter", "-s", server[0], "-n", name, "-c", str(channels))
    elif peer.startswith("cmeter"):
        env = dict(b.env, LD_PRELOAD=b.args.cycle_shim)
        interval = ["--poll-us", str(poll["us"])] if peer == "cmeter_matched" else []
        cmd = [b.args.cmeter, "-s", server[0], "-n", name, "-c", str(channels), *interval]
    else:
        env = dict(b.env)
        cmd = [sys.executable, b.args.pymeter, "-s", server[0], "-n", name, "-c", str(channels)]
    env["CYCLE_CLOCK_OUT"] = str(clock_file)
    out = open(b.work / f"{tag}.out", "w")
    err = open(b.work / f"{tag}.err", "w")
    proc = b.procs.start(cmd, env=env, stdout=out, stderr=err)
    try:
        if not b.wait_connected(server, f"{name}:in_{channels}", proc):
            b.log(f"  {tag}: client never connected; see {err.name}")
            return None
        b.freewheel(server, True)
        # Counted over the sleep only: jack_freewheel's own client coming and going wakes
        # libjack's notification thread in every client, which is not an idle wakeup.
        before = voluntary_switches(proc.pid) if peer == "jackhost" and poll["wakeups"] is None else None
        started = time.monotonic()
        time.sleep(seconds)
        if before is not None:
            after = voluntary_switches(proc.pid)
            deltas = sorted(after[t] - before[t] for t in after if t in before)
            if len(deltas) >= 2:
                # The busiest thread is the process thread (one switch per cycle); the rest idle.
                poll["wakeups"] = sum(deltas[:-1]) / (time.monotonic() - started)
                poll["us"] = int(min(max(1e6 / max(poll["wakeups"], 1.0), 1000), 100000))
        b.freewheel(server, False)
        time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        code = b.procs.wait(proc, 15)
    finally:
        if proc.poll() is None:
            b.freewheel(server, False)
            b.procs.stop(proc)
        out.close()
        err.close()
    if code != 0:
        b.log(f"  {tag}: exit {code}; see {err.name}")
        return None
    clock = parse_cycle_clock(clock_file)
    if not clock or not clock.get("median_ns") or clock.get("fast", 0) < 100:
        b.log(f"  {tag}: no freewheel cycles recorded ({clock})")
        return None
    return 1e9 / clock["median_ns"]


def parse_cycle_clock(path: Path):
    """The summary cycle_clock_shim wrote at the client's exit, as a dict of numbers, or None."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    values = {}
    for field in text.split():
        key, _, value = field.partition("=")
        try:
            values[key] = float(value)
        except ValueError:
            pass
    return values or None


def freewheel_run(b: Bench, spec, make_cmd, last_port, tag, attempts=3):
    """freewheel_once, retried when the client crashes (jack_capture 0.9.73 sometimes segfaults
    while freewheeling); crashes are counted in b.crashes and reported."""
    for _ in range(attempts):
        result = freewheel_once(b, spec, make_cmd, last_port, tag)
        if result != "crash":
            return result
        peer = tag.split("-")[1] if "-" in tag else tag
        b.crashes[peer] = b.crashes.get(peer, 0) + 1
    return None


def freewheel_once(b: Bench, spec, make_cmd, last_port, tag):
    """One freewheel measurement on a fresh server: start the client in real time, wait until it is
    connected, switch freewheel on, and time until the client exits by itself.

    jack2 1.9.21 cannot be reused after a client has closed while it freewheels: the next
    `jack_freewheel` client cannot even open ("freewheel-01", SuspendRefNum errors, clients hang),
    so every run gets its own server."""
    server = b.start_server(*spec)
    cmd, env = make_cmd(server)
    out = open(b.work / f"{tag}.out", "w")
    err = open(b.work / f"{tag}.err", "w")
    proc = b.procs.start(cmd, env=env, stdout=out, stderr=err)
    try:
        if not b.wait_connected(server, last_port, proc):
            b.procs.stop(proc)
            b.log(f"  {tag}: client never connected; see {err.name}")
            return None
        started = time.monotonic()
        b.freewheel(server, True)
        code = b.procs.wait(proc, 120)
        elapsed = time.monotonic() - started
    finally:
        if proc.poll() is None:
            b.procs.stop(proc)
        out.close()
        err.close()
        b.kill_server(server)
    if code is not None and code < 0:
        b.log(f"  {tag}: killed by signal {-code}; retrying")
        return "crash"
    if code != 0:
        b.log(f"  {tag}: exit {code}; see {err.name}")
        return None
    b.freewheel_times.append((tag, cmd, elapsed))
    return elapsed


# ----------------------------------------------------------------------------------------
# Case 2: time inside the callback, 64 x 64 at 48 kHz, meter + recorder + stream

def case_callback(b: Bench):
    rounds = b.args.rounds
    seconds = 2.0 if b.quick else 4.0
    b.log("case 2: callback time, 64 ch x 64 frames, real time")
    # jackd -R: the clients' process threads run SCHED_FIFO, as in a real setup. Without it, the
    # callback shares the two CPUs with each client's own helper threads, and its p99 measured
    # how many helpers a client has (jackhost's workers and transfer threads) more than its work.
    server = b.start_server(64, 64, realtime=True)
    results = {"jackhost": [], "cmeter": [], "cfair": []}
    dropped = []   # cfair's dropped frames per run (ring full), which would make its callback cheaper
    try:
        # Round -1 warms the machine (page cache, the server's first clients) and is not counted:
        # whichever peer ran first used to pay for it.
        for r in range(-1, rounds):
            for peer in b.alternate(max(r, 0), ["jackhost", "cmeter", "cfair"]):
                if peer == "jackhost":
                    wav = b.work / "callback.wav"
                    cmd = b.jackhost("run", "--meter", "--record", wav, "--overwrite", "--stream", "-o", "/dev/null", "--callback-time",
                                     "-s", server[0], "-n", "jhb_cb", "-c", "64", "--duration", f"{seconds:g}")
                    code, out, err = b.run_client(cmd, b.jackhost_env(), seconds + 30, f"cb-jackhost-{r}")
                    wav.unlink(missing_ok=True)
                elif peer == "cmeter":
                    cmd = [b.args.cmeter, "-s", server[0], "-n", "jhb_ccb", "-c", "64", "--frames",
                           str(int(seconds * RATE)), "--callback-time"]
                    code, out, err = b.run_client(cmd, b.env, seconds + 30, f"cb-cmeter-{r}")
                else:
                    raw = b.work / "callback-cfair.raw"   # beside jackhost's WAV: the same disk
                    cmd = [b.args.cfair, "-s", server[0], "-n", "jhb_cfcb", "-c", "64", "--frames",
                           str(int(seconds * RATE)), "--record", raw, "--stream", "/dev/null", "--callback-time"]
                    code, out, err = b.run_client(cmd, b.env, seconds + 30, f"cb-cfair-{r}")
                    raw.unlink(missing_ok=True)
                    m = re.search(r"dropped=(\d+)", out)
                    dropped.append(int(m.group(1)) if m else None)
                parsed = parse_callback(err) if code == 0 else None
                if parsed is None:
                    b.log(f"  callback {peer} round {r}: exit {code}: {err.strip()[-300:]}")
                if r < 0:
                    if peer == "cfair":
                        dropped.pop()
                    continue
                results[peer].append(parsed)
    finally:
        b.stop_server(server)
    period = 1e6 * 64 / RATE
    def med(peer, key):
        return b.median([x[key] for x in results[peer] if x])
    p99 = med("jackhost", "p99")
    limit = 0.05 * period
    c99 = med("cmeter", "p99")
    f99 = med("cfair", "p99")
    b.row("2. Callback time, 64 ch x 64 fr, meter+record+stream", "p99 / period",
          f"p50 {fmt(med('jackhost', 'p50'))} p99 {fmt(p99)} max {fmt(med('jackhost', 'max'))} us",
          f"C p50 {fmt(med('cmeter', 'p50'))} p99 {fmt(c99)} max {fmt(med('cmeter', 'max'))} us",
          f"{p99 / period:.3f}" if p99 is not None else "n/a", "< 0.05", "PASS" if p99 is not None and p99 < limit else "FAIL")
    if p99 is not None and c99:
        b.row("2. Callback time, 64 ch x 64 fr, meter+record+stream", "p99 vs C meter-only p99",
              f"{fmt(p99)} us", f"C {fmt(c99)} us", f"{p99 / c99:.2f}", "(info)", "-")
    # The fair peer does the same real-time work (meter, a ring copy for the recorder, another for the
    # stream), so this ratio is the one that tells a regression from new work. Target: issue 25, item 3.
    b.callback_fair_ratio = p99 / f99 if p99 is not None and f99 else None
    b.row("2. Callback time, 64 ch x 64 fr, meter+record+stream", "p99 vs fair C p99 (same work)",
          f"p50 {fmt(med('jackhost', 'p50'))} p99 {fmt(p99)} us",
          f"C fair p50 {fmt(med('cfair', 'p50'))} p99 {fmt(f99)} max {fmt(med('cfair', 'max'))} us",
          f"{b.callback_fair_ratio:.2f}" if b.callback_fair_ratio is not None else "n/a", "<= 1.1",
          "PASS" if b.callback_fair_ratio is not None and b.callback_fair_ratio <= 1.1 else "FAIL")
    lines = ["### 2. Time inside the process callback\n",
             f"64 inputs, 64 frames at 48 kHz (period {period:.0f} us), real time (`jackd -R`, not freewheel), {seconds:g} s per run, "
             f"{rounds} rounds after one warm-up round that is not counted. jackhost: `run --meter --record F --stream -o /dev/null --callback-time`. cmeter: the "
             "meter only. cfair (Benchmarks/peers/cfair.c): the same real-time work as jackhost in plain C -- peak and "
             "sum of squares of every input, the server's frame time and microseconds read every cycle (a jump counted as "
             "skipped frames) and sent with each block, every input copied into a lock-free ring drained by a thread that writes "
             "raw float to a file beside jackhost's WAV, and copied again into a second ring drained by a thread that "
             "writes to /dev/null; its writers poll once a period, as jackhost's do. All three are timed the same way "
             "(CLOCK_MONOTONIC at entry and exit, 0.1 us buckets below 1 ms: CallbackTimer and callback_timer.h). Medians of the per-run percentiles; worst max "
             "over all runs in the last column. "
             f"cfair's dropped frames (ring full) per run: {', '.join('n/a' if d is None else str(d) for d in dropped)}.\n",
             "| peer | p50 per round (us) | p99 per round | max per round | worst max |", "|---|---|---|---|---|"]
    for peer in results:
        vals = results[peer]
        lines.append(f"| {peer} | " + " | ".join(", ".join(str(x[k]) if x else "n/a" for x in vals)
                                                for k in ("p50", "p99", "max")) +
                     f" | {max((x['max'] for x in vals if x), default='n/a')} |")
    b.details.append("\n".join(lines) + "\n")


def realtime_thread_runtime(pid):
    """Nanoseconds on a CPU of pid's SCHED_FIFO and SCHED_RR threads (a JACK client's process
    thread) from /proc/PID/task/TID/schedstat, and how many there are; None once it is gone."""
    total, found = 0, 0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return None
    for task in tasks:
        try:
            # After the ")" of the command name the fields start at field 3; policy is field 41.
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[38]) in (1, 2):
                total += int((task / "schedstat").read_text().split()[0])
                found += 1
        except (OSError, ValueError, IndexError):
            continue
    return total, found


def meter_record_command(b: Bench, subject, server, channels, seconds, target, name, callback_time=False):
    """(command, environment) for the cases that compare `run --meter --record` with cfair doing
    the same real-time work (2b, its side-by-side rounds, 2c): jackhost or cfair, on `server`,
    for `seconds`, recording to `target`, as client `name` (cfair's gets a `c` after it)."""
    timing = ["--callback-time"] if callback_time else []
    if subject == "jackhost":
        return (b.jackhost("run", "--meter", "--record", target, "--overwrite", *timing, "-s", server[0], "-n", name,
                           "-c", str(channels), "--duration", f"{seconds:g}"), b.jackhost_env())
    return ([b.args.cfair, "-s", server[0], "-n", name + "c", "-c", str(channels), "--frames", str(int(seconds * RATE)),
             "--record", target, *timing], b.env)


def case_rtcpu(b: Bench):
    """Issue 25, item 3: the real-time thread's CPU per cycle and the callback's p99, jackhost
    against cfair doing the same real-time work, at 2, 8 and 64 channels x 64 frames."""
    rounds = 3 if b.quick else 5
    seconds, warm, tail = (4.0, 1.5, 0.8) if b.quick else (8.0, 2.0, 1.0)
    period = 64
    cycle_us = 1e6 * period / RATE
    lines = ["### 2b. The real-time thread's CPU per cycle, by width\n",
             f"`jackhost run --meter --record F --callback-time` against cfair `--record F --callback-time` (the same "
             f"real-time work in plain C: the meter, each cycle's server time with its block, one ring copy for the "
             f"recorder), on a `jackd -R` dummy server, "
             f"48 kHz, {period}-frame periods (the capture ports' silence; the work does not depend on the values), "
             f"{seconds:g} s per run, {rounds} rounds, the order reversed every other round. CPU = nanoseconds on a "
             f"CPU of the client's SCHED_FIFO threads (its JACK process thread) from /proc/PID/task/TID/schedstat, "
             f"from {warm:g} s after the start to {tail:g} s before the end, per cycle of that window. p99: each "
             "client's own callback timer (CLOCK_MONOTONIC at entry and exit, 0.1 us buckets). Medians over the rounds.\n",
             "| channels | subject | CPU us/cycle per round | callback p99 us per round | RT threads |",
             "|---|---|---|---|---|"]
    lines_side = []
    for channels in (2, 8, 64):
        b.log(f"case 2b: real-time thread CPU, {channels} ch x {period} frames, {rounds} rounds")
        server = b.start_server(period, channels, realtime=True)
        cpu = {"jackhost": [], "cfair": []}
        p99 = {"jackhost": [], "cfair": []}
        threads = {"jackhost": set(), "cfair": set()}
        try:
            for r in range(rounds):
                for subject in b.alternate(r, ["jackhost", "cfair"]):
                    tag = f"rtcpu-{channels}-{subject}-{r}"
                    target = b.work / f"{tag}.{'wav' if subject == 'jackhost' else 'raw'}"
                    cmd, env = meter_record_command(b, subject, server, channels, seconds, target, "jhb_rt", callback_time=True)
                    out_path, err_path = b.work / f"{tag}.out", b.work / f"{tag}.err"
                    with open(out_path, "w") as out, open(err_path, "w") as err:
                        proc = b.procs.start(cmd, env=env, stdout=out, stderr=err)
                        started = time.monotonic()
                        first = last = None
                        while proc.poll() is None and time.monotonic() < started + seconds + 30:
                            now = time.monotonic() - started
                            if first is None and now >= warm:
                                first = (realtime_thread_runtime(proc.pid), time.monotonic())
                            if first is not None and last is None and now >= seconds - tail:
                                last = (realtime_thread_runtime(proc.pid), time.monotonic())
                            time.sleep(0.01)
                        code = b.procs.wait(proc, 30)
                    target.unlink(missing_ok=True)
                    parsed = parse_callback(err_path.read_text(errors="replace")) if code == 0 else None
                    p99[subject].append(parsed["p99"] if parsed else None)
                    if code == 0 and first and last and first[0] and last[0] and last[0][1] > 0:
                        window = last[1] - first[1]
                        cpu[subject].append((last[0][0] - first[0][0]) / 1e3 / (window * RATE / period))
                        threads[subject].add(last[0][1])
                    else:
                        b.log(f"  {tag}: exit {code}, no CPU window")
                        cpu[subject].append(None)
        finally:
            b.stop_server(server)
        for subject in cpu:
            lines.append(f"| {channels} | {subject} | " + ", ".join(fmt(x) for x in cpu[subject]) + " | " +
                         ", ".join(fmt(x) for x in p99[subject]) + f" | {', '.join(map(str, sorted(threads[subject])))} |")
        ours, theirs = b.median(cpu["jackhost"]), b.median(cpu["cfair"])
        b.row(f"2b. Real-time thread, {channels} ch x {period} fr, meter+record", "CPU per cycle vs fair C, one at a time",
              f"{fmt(ours)} us", f"C fair {fmt(theirs)} us", f"{ours / theirs:.2f}" if ours and theirs else "n/a",
              "(info)", "-")
        ours, theirs = b.median(p99["jackhost"]), b.median(p99["cfair"])
        b.row(f"2b. Real-time thread, {channels} ch x {period} fr, meter+record", "callback p99 vs fair C, one at a time",
              f"{fmt(ours)} us", f"C fair {fmt(theirs)} us", f"{ours / theirs:.2f}" if ours and theirs else "n/a",
              "(info)", "-")
        side = rtcpu_side_by_side(b, channels, period, rounds + (rounds % 2))
        lines_side.append(side["line"])
        for measure, key, target in (("CPU per cycle", "cpu", 1.0), ("callback p99", "p99", 1.1)):
            result = side[key]
            b.row(f"2b. Real-time thread, {channels} ch x {period} fr, meter+record",
                  f"{measure} vs fair C, side by side (decides)",
                  f"first {fmt(result['jackhost'][0])}, second {fmt(result['jackhost'][1])} us",
                  f"C fair first {fmt(result['cfair'][0])}, second {fmt(result['cfair'][1])} us",
                  f"{result['ratio']:.2f}" if result["ratio"] else "n/a",
                  f"<= {target:g}", "PASS" if result["ratio"] and result["ratio"] <= target else "FAIL")
    lines.append(f"\nOne cycle is {cycle_us:.0f} us.\n")
    lines.append(
        "**Side by side (the verdict).** One at a time, a round's CPU moves with whatever else the machine does "
        "then (20 % between rounds of the same client). So both clients also run at once on one server, on the same "
        "cycles, each connected to every capture port, for the same window; the one started first runs first in "
        "each cycle. Position matters more than either client: the first is woken by the server, the second by the "
        "first, and the first pays about three times the CPU (finding F9). So the start order alternates, each "
        "client's CPU is the median over the rounds it ran in that position, and the ratio is the geometric mean "
        "of the two positions' ratios, which cancels the position. The second position's ratio is the purest "
        "measure of the clients' own work. The callback p99 is taken the same way, from each client's own timer over "
        "the same cycles: both see the same bursts of the machine's noise, which one-at-a-time rounds do not.\n")
    lines.append("| channels | measure | jackhost first / second (per round) | cfair first / second | ratio first | ratio second | ratio (geometric mean) |")
    lines.append("|---|---|---|---|---|---|---|")
    lines.extend(lines_side)
    b.details.append("\n".join(lines) + "\n")


def rtcpu_side_by_side(b: Bench, channels, period, rounds):
    """jackhost and cfair at once on one jackd -R server: each one's real-time thread's CPU per
    cycle over the same window, and its callback p99 over the same cycles, by position in the
    process chain (the first started runs first)."""
    seconds, warm, tail = (5.0, 2.0, 0.8) if b.quick else (8.0, 2.5, 1.0)
    server = b.start_server(period, channels, realtime=True)
    by_position = {"jackhost": ([], []), "cfair": ([], [])}
    p99_by_position = {"jackhost": ([], []), "cfair": ([], [])}
    try:
        for r in range(rounds):
            order = ["jackhost", "cfair"] if r % 2 == 0 else ["cfair", "jackhost"]
            procs = {}
            for subject in order:
                tag = f"rtside-{channels}-{subject}-{r}"
                target = b.work / f"{tag}.{'wav' if subject == 'jackhost' else 'raw'}"
                cmd, env = meter_record_command(b, subject, server, channels, seconds, target, "jhb_rts", callback_time=True)
                with open(b.work / f"{tag}.out", "w") as out, open(b.work / f"{tag}.err", "w") as err:
                    procs[subject] = (b.procs.start(cmd, env=env, stdout=out, stderr=err), target)
                time.sleep(0.5)   # activated before the next one: it runs first in the chain
            time.sleep(warm)
            first = {s: realtime_thread_runtime(p.pid) for s, (p, _) in procs.items()}
            t0 = time.monotonic()
            time.sleep(seconds - warm - tail - 0.5)
            last = {s: realtime_thread_runtime(p.pid) for s, (p, _) in procs.items()}
            window = time.monotonic() - t0
            for position, subject in enumerate(order):
                proc, target = procs[subject]
                code = b.procs.wait(proc, 30)
                target.unlink(missing_ok=True)
                tag = f"rtside-{channels}-{subject}-{r}"
                parsed = parse_callback((b.work / f"{tag}.err").read_text(errors="replace")) if code == 0 else None
                if parsed:
                    p99_by_position[subject][position].append(parsed["p99"])
                if code == 0 and first[subject] and last[subject] and last[subject][1] > 0:
                    cpu = (last[subject][0] - first[subject][0]) / 1e3 / (window * RATE / period)
                    by_position[subject][position].append(cpu)
                else:
                    b.log(f"  {tag}: exit {code}, no CPU window")
    finally:
        b.stop_server(server)
    cpu = position_ratio(b, by_position)
    p99 = position_ratio(b, p99_by_position)
    def per_round(table, subject):
        return " / ".join(", ".join(fmt(x) for x in table[subject][i]) for i in (0, 1))
    def ratios(result):
        first, second, mean = (f"{x:.2f}" if x else "n/a" for x in (*result["positions"], result["ratio"]))
        return f"{first} | {second} | {mean}"
    line = (f"| {channels} | CPU us/cycle | {per_round(by_position, 'jackhost')} | {per_round(by_position, 'cfair')} | {ratios(cpu)} |\n"
            f"| {channels} | callback p99 us | {per_round(p99_by_position, 'jackhost')} | {per_round(p99_by_position, 'cfair')} | {ratios(p99)} |")
    return {"cpu": cpu, "p99": p99, "line": line}


def position_ratio(b: Bench, by_position):
    """jackhost over cfair, per position in the chain (medians over the rounds in it), and the
    geometric mean of the two, which cancels what running first costs (finding F9)."""
    medians = {s: (b.median(p[0]), b.median(p[1])) for s, p in by_position.items()}
    positions = [medians["jackhost"][i] / medians["cfair"][i] if medians["jackhost"][i] and medians["cfair"][i] else None
                 for i in (0, 1)]
    ratio = math.sqrt(positions[0] * positions[1]) if all(positions) else None
    return {"jackhost": medians["jackhost"], "cfair": medians["cfair"], "positions": positions, "ratio": ratio}


PROFILE_STAGES = [
    # (stage, test on (dso, symbol)), first match wins; the order of the table.
    ("kernel: wake-up, switch, futex", lambda dso, sym: dso.startswith("[kernel")),
    ("libjack and its futex calls", lambda dso, sym: "libjack" in dso or sym == "syscall"),
    ("clock reads (libjack's timing)", lambda dso, sym: "clock_gettime" in sym or dso == "[vdso]"),
    ("channel copies (memmove)", lambda dso, sym: "memmove" in sym or "memcpy" in sym),
    ("meter", lambda dso, sym: "LevelMeter" in sym or "measure" in sym),
    ("ring writes", lambda dso, sym: "AudioBlockRing" in sym or "DeferredConsumerRunner" in sym or "prefetch" in sym),
    ("engine: buffers, times, counters", lambda dso, sym: "CaptureEngine" in sym or "cjack_rt" in sym),
    ("Swift runtime", lambda dso, sym: "libswift" in dso),
    ("cfair's callback (all its own work)", lambda dso, sym: dso == "cfair"),
    ("other", lambda dso, sym: True),
]


def perf_breakdown(data_path, env):
    """{stage: samples} from `perf report` on one recording, and the total."""
    report = subprocess.run(["perf", "report", "-i", str(data_path), "--stdio", "--no-children", "--sort", "dso,symbol",
                             "--show-nr-samples", "-g", "none"], capture_output=True, text=True, env=env).stdout
    stages = {name: 0 for name, _ in PROFILE_STAGES}
    total = 0
    for line in report.splitlines():
        m = re.match(r"^\s+[\d.]+%\s+(\d+)\s+(\S+)\s+\[.\]\s+(.*?)\s*$", line)
        if not m:
            continue
        # perf pads each line with empty columns ("-      -"): the symbol is what comes before them.
        samples, dso, sym = int(m.group(1)), m.group(2), re.sub(r"(\s+-)+$", "", m.group(3))
        total += samples
        for name, test in PROFILE_STAGES:
            if test(dso, sym):
                stages[name] += samples
                break
    return stages, total


def case_profile(b: Bench):
    """Issue 25, item 2: where the real-time thread's time goes, by stage, jackhost beside cfair:
    `perf record` (cpu-clock, the only event a VM without PMU offers) on each client's SCHED_FIFO
    thread alone, for a window of steady running."""
    if shutil.which("perf") is None:
        b.row("2c. Profile of the real-time thread", "breakdown", "perf is not installed", "-", "-", "(info)", "-")
        return
    frequency = 20000
    seconds, window = (6.0, 3.0) if b.quick else (12.0, 8.0)
    period = 64
    rounds = 1 if b.quick else 2
    lines = ["### 2c. Where the real-time thread's time goes\n",
             f"`perf record -e cpu-clock -F {frequency} -t TID` on the client's SCHED_FIFO thread (its JACK process "
             f"thread) for {window:g} s of steady running, jackhost `run --meter --record F` beside cfair `--record F` "
             f"(the same work in C), {period}-frame periods on a `jackd -R` dummy server, {rounds} round(s), the "
             "order reversed every other round; samples summed over the rounds. Each stage's samples are turned into "
             "microseconds per cycle (samples / frequency / cycles in the window). The kernel, libjack and clock rows "
             "are JACK's own cost of waking a client, the same for any client; the rows below them are the client's "
             "own work. This machine is a VM with no hardware counters, so cpu-clock sampling is what there is.\n"]
    for channels in (2, 64):
        b.log(f"case 2c: profile, {channels} ch x {period} frames")
        server = b.start_server(period, channels, realtime=True)
        totals = {"jackhost": None, "cfair": None}
        cycles = {"jackhost": 0, "cfair": 0}
        try:
            for r in range(rounds):
                for subject in b.alternate(r, ["jackhost", "cfair"]):
                    tag = f"profile-{channels}-{subject}-{r}"
                    target = b.work / f"{tag}.{'wav' if subject == 'jackhost' else 'raw'}"
                    cmd, env = meter_record_command(b, subject, server, channels, seconds, target, "jhb_prof")
                    data = b.work / f"{tag}.perf"
                    with open(b.work / f"{tag}.out", "w") as out, open(b.work / f"{tag}.err", "w") as err:
                        proc = b.procs.start(cmd, env=env, stdout=out, stderr=err)
                        time.sleep(min(2.0, seconds - window - 0.5))
                        tids = [t.name for t in Path(f"/proc/{proc.pid}/task").iterdir()
                                if int((t / "stat").read_text().rsplit(")", 1)[1].split()[38]) in (1, 2)]
                        if tids:
                            subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(frequency), "-t",
                                            ",".join(tids), "-o", str(data), "--", "sleep", f"{window:g}"],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=b.env)
                        code = b.procs.wait(proc, seconds + 30)
                    target.unlink(missing_ok=True)
                    if code != 0 or not tids or not data.exists():
                        b.log(f"  {tag}: exit {code}, threads {tids}: no profile")
                        continue
                    stages, _ = perf_breakdown(data, b.env)
                    data.unlink(missing_ok=True)
                    if totals[subject] is None:
                        totals[subject] = stages
                    else:
                        for name in stages:
                            totals[subject][name] += stages[name]
                    cycles[subject] += window * RATE / period
        finally:
            b.stop_server(server)
        def per_cycle(subject, name):
            if not totals[subject] or not cycles[subject]:
                return None
            return totals[subject][name] / frequency / cycles[subject] * 1e6
        lines += [f"\n{channels} channels x {period} frames (us per cycle):\n", "| stage | jackhost | cfair |",
                  "|---|---|---|"]
        own = {"jackhost": 0.0, "cfair": 0.0}
        for index, (name, _) in enumerate(PROFILE_STAGES):
            values = [per_cycle(subject, name) for subject in ("jackhost", "cfair")]
            if all(v is None or v == 0 for v in values):
                continue
            lines.append(f"| {name} | {fmt(values[0])} | {fmt(values[1])} |")
            if index >= 3:
                for subject, value in zip(("jackhost", "cfair"), values):
                    own[subject] += value or 0
        lines.append(f"| **the client's own work** (rows from the channel copies down) | {fmt(own['jackhost'])} | "
                     f"{fmt(own['cfair'])} |")
        b.row(f"2c. Profile, {channels} ch x {period} fr, meter+record", "own work per cycle vs fair C (perf)",
              f"{fmt(own['jackhost'])} us", f"C fair {fmt(own['cfair'])} us",
              f"{own['jackhost'] / own['cfair']:.2f}" if own["cfair"] else "n/a", "(info)", "-")
    b.details.append("\n".join(lines) + "\n")


# ----------------------------------------------------------------------------------------
# Cases 3 and 4: the kernels (Benchmarks/Kernels)

def case_kernels(b: Bench):
    rounds = b.args.rounds
    seconds = 0.03 if b.quick else 0.12
    b.log("cases 3-4: ring and conversion kernels")
    proc = subprocess.run([b.args.kernel_bench, "--rounds", str(rounds), "--seconds", str(seconds)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        b.row("3-4. Kernels", "kernel-bench", "failed", "-", "-", "-", "FAIL")
        b.details.append(f"### 3-4. Kernels\n\nkernel-bench failed: {proc.stderr.strip()}\n")
        return
    data = {}
    info = {}
    for line in proc.stdout.splitlines():
        record = json.loads(line)
        if "info" in record:
            info[record["info"]] = record["value"]
            continue
        data.setdefault((record["case"], record["item"]), {}).setdefault(record["subject"], {})[record["round"]] = record["rate"]

    def ratio(entry, peer, subject="jackhost"):
        rounds_seen = sorted(set(entry[subject]) & set(entry[peer]))
        return statistics.median(entry[subject][r] / entry[peer][r] for r in rounds_seen)

    kernels = info.get("kernels", "?")
    portable_ratios = []   # (item, vs scalar, vs memcpy) of the portable kernels, when AVX2 ones ran

    lines = ["### 1a, 3 and 4. The meter kernel, deferred delivery (AudioBlockRing + worker) and conversion kernels\n",
             "Measured by `Benchmarks/Kernels` (`kernel-bench`), which links the library as built for release. "
             f"{rounds} rounds, {seconds:g} s per measurement, subjects rotated every round; every kernel's output is "
             "first checked against its scalar peer bit for bit. Ratios are medians of per-round ratios. "
             f"Conversion kernels in use: **{kernels}** (`SampleConversion.activeKernels`); the `portable` subject is "
             "the Swift SIMD implementation that CPUs without AVX2 (or `JACKHOST_SIMD=portable`) run.\n",
             "| case | item | subject | median rate | per-round rates |", "|---|---|---|---|---|"]
    for (case, item), entry in data.items():
        for subject, values in entry.items():
            unit = "B/s" if case == "ring" else "samples/s"
            lines.append(f"| {case} | {item} | {subject} | {fmt(statistics.median(values.values()))} {unit} | " +
                         ", ".join(fmt(v) for v in values.values()) + " |")
        if case == "meter":
            r = ratio(entry, "scalar")
            b.row(f"1a. Meter kernel `LevelMeter.measure`, 64 x 64 ({kernels})", "samples/s vs scalar C",
                  fmt(statistics.median(entry["jackhost"].values())),
                  "scalar " + fmt(statistics.median(entry["scalar"].values())), f"{r:.2f}", "(diagnosis)", "-")
            continue
        if case == "ring":
            r = ratio(entry, "memcpy")
            b.row(f"3. Deferred delivery, {item}", "GB/s vs memcpy",
                  fmt(statistics.median(entry["jackhost"].values()) / 1e9) + " GB/s",
                  "memcpy " + fmt(statistics.median(entry["memcpy"].values()) / 1e9) + " GB/s",
                  f"{r:.2f}", ">= 0.7", "PASS" if r >= 0.7 else "FAIL")
        else:
            rs = ratio(entry, "scalar")
            rm = ratio(entry, "memcpy")
            if "portable" in entry:
                portable_ratios.append((item, ratio(entry, "scalar", "portable"), ratio(entry, "memcpy", "portable")))
            b.row(f"4. Convert {item} ({kernels})", "samples/s vs scalar C",
                  fmt(statistics.median(entry["jackhost"].values())),
                  "scalar " + fmt(statistics.median(entry["scalar"].values())),
                  f"{rs:.2f}", ">= 4", "PASS" if rs >= 4 else "FAIL")
            b.row(f"4. Convert {item} ({kernels})", "samples/s vs memcpy",
                  fmt(statistics.median(entry["jackhost"].values())),
                  "memcpy " + fmt(statistics.median(entry["memcpy"].values())),
                  f"{rm:.2f}", ">= 0.5", "PASS" if rm >= 0.5 else "FAIL")
    if portable_ratios:
        low_scalar = min(portable_ratios, key=lambda r: r[1])
        low_memcpy = min(portable_ratios, key=lambda r: r[2])
        b.row("4. Portable kernels (no AVX2), worst item", "vs scalar C / vs memcpy",
              f"{low_scalar[0]}: {low_scalar[1]:.2f}; {low_memcpy[0]}: {low_memcpy[2]:.2f}", "-", "-", "(info)", "-")
    b.details.append("\n".join(lines) + "\n")


# ----------------------------------------------------------------------------------------
# Cases 5 and 6: real-time recording (zero drops) and resident memory

def sample_memory(pid):
    """VmHWM (peak RSS) and the current RSS split, in KiB, or None when the process is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return None
    def field(text, key):
        m = re.search(rf"^{key}:\s+(\d+) kB", text, re.M)
        return int(m.group(1)) if m else 0
    return {"hwm": field(status, "VmHWM"), "rss": field(rollup, "Rss"), "anon": field(rollup, "Anonymous"),
            "shmem": field(status, "RssShmem"), "file": field(status, "RssFile")}


def run_sampled(b: Bench, cmd, env, timeout, tag):
    """Runs a client to completion, sampling its memory every 50 ms; returns (code, out, err, last sample)."""
    out_path, err_path = b.work / f"{tag}.out", b.work / f"{tag}.err"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = b.procs.start(cmd, env=env, stdout=out, stderr=err)
        last = None
        deadline = time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < deadline:
            sample = sample_memory(proc.pid)
            if sample:
                last = sample
            time.sleep(0.05)
        code = b.procs.wait(proc, max(0.1, deadline - time.monotonic()))
    return code, out_path.read_text(errors="replace"), err_path.read_text(errors="replace"), last


def sndfile_frames(path):
    try:
        out = subprocess.run(["sndfile-info", str(path)], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"^Frames\s*:\s*(\d+)", out, re.M)
    return int(m.group(1)) if m else None


ENCODER_LIMITS = {"flac": 8, "ogg": 255, "opus": 255, "mp3": 2}   # channels per file (AudioContainer)
JACK_CAPTURE_FORMATS = {"flac": (["-f", "flac"], 8), "ogg": (["-f", "ogg"], 255), "mp3": (["-mp3"], 2)}


def case_encoders(b: Bench):
    """Issue 25, item 5: the most channels each encoder records in real time, jackhost beside
    jack_capture where it writes the format."""
    seconds = 4.0 if b.quick else 10.0
    ladder = (2, 8, 32) if b.quick else (2, 8, 16, 32, 64, 128)
    period = 256
    slack = 3.0   # start-up and the final flush: a writer that fell behind finishes later than this
    lines = ["### 5e. Encoders in real time, 48 kHz, period 256\n",
             f"The most channels, from the ladder {', '.join(map(str, ladder))}, recorded in real time on a `jackd -R` "
             f"dummy server ({seconds:g} s runs of the capture ports) with no dropped frame, every frame in the file "
             f"(within 1 % or 4096 frames for the lossy codecs, whose encoders pad), and the run over within {slack:g} s "
             "of its duration: a writer that cannot keep up falls behind and finishes late, or drops, whatever its "
             "buffer. jackhost writes one file where the container takes the width (FLAC 8 channels, MP3 2) and "
             "`--channel-files` beyond it; jack_capture writes one file and cannot go past those limits, nor write "
             "Opus. Default quality for both; one writer thread each.\n",
             "| format | channels | peer | exit | seconds | frames | dropped | keeps up |", "|---|---|---|---|---|---|---|---|"]
    best = {}
    for fmt_name in ("flac", "ogg", "opus", "mp3"):
        for peer in ("jackhost", "jack_capture"):
            if peer == "jack_capture" and fmt_name not in JACK_CAPTURE_FORMATS:
                best[(fmt_name, peer)] = None
                continue
            best[(fmt_name, peer)] = 0
    def alive(key, index):
        """Whether (format, peer) passed every rung below `index` (and can go on)."""
        value = best[key]
        return value is not None and (index == 0 or value == ladder[index - 1])
    for index, channels in enumerate(ladder):
        if not any(alive(key, index) and (key[1] == "jackhost" or channels <= JACK_CAPTURE_FORMATS[key[0]][1])
                   for key in best):
            break
        b.log(f"case 5e: encoders at {channels} channels")
        server = b.start_server(period, channels, realtime=True)
        try:
            for fmt_name in ("flac", "ogg", "opus", "mp3"):
                for peer in ("jackhost", "jack_capture"):
                    if not alive((fmt_name, peer), index):
                        continue   # it cannot write the format, or failed lower down the ladder
                    if peer == "jack_capture" and channels > JACK_CAPTURE_FORMATS[fmt_name][1]:
                        continue
                    work = b.work / f"enc-{fmt_name}-{peer}-{channels}"
                    shutil.rmtree(work, ignore_errors=True)
                    work.mkdir()
                    target = work / f"take.{fmt_name}"
                    if peer == "jackhost":
                        cmd = b.jackhost("record", target, "-s", server[0], "-n", "jhb_enc", "-c", str(channels),
                                         "--duration", f"{seconds:g}", "--no-meter")
                        if channels > ENCODER_LIMITS[fmt_name]:
                            cmd.append("--channel-files")
                        env = b.jackhost_env()
                    else:
                        cmd = (["jack_capture", "-c", str(channels), "-p", "system:capture*", "-d", f"{seconds:g}",
                                "-dc", "-ns"] + JACK_CAPTURE_FORMATS[fmt_name][0] + [target])
                        env = dict(b.env, JACK_DEFAULT_SERVER=server[0])
                    started = time.monotonic()
                    code, out, err = b.run_client(cmd, env, seconds + 60, f"enc-{fmt_name}-{peer}-{channels}")
                    elapsed = time.monotonic() - started
                    files = sorted(work.glob(f"*.{fmt_name}"))
                    frames = sndfile_frames(files[0]) if files else None
                    if peer == "jackhost":
                        m = re.search(r"silence inserted for (\d+) dropped frames", out)
                        dropped = int(m.group(1)) if m else None
                    else:
                        m = re.search(r"total of (\d+) overruns", out + err)
                        dropped = int(m.group(1)) if m else 0
                    expected = seconds * RATE
                    # Lossy files may carry the encoder's delay and padding (LAME's, without its gapless tag).
                    tolerance = 0 if fmt_name == "flac" else max(0.01 * expected, 4096)
                    complete = frames is not None and abs(frames - expected) <= tolerance
                    good = code == 0 and dropped == 0 and complete and elapsed <= seconds + slack
                    if good:
                        best[(fmt_name, peer)] = channels
                    lines.append(f"| {fmt_name} | {channels} | {peer} | {code} | {elapsed:.1f} | {frames} | {dropped} | "
                                 f"{'yes' if good else 'no'} |")
                    shutil.rmtree(work, ignore_errors=True)
        finally:
            b.stop_server(server)
    for fmt_name in ("flac", "ogg", "opus", "mp3"):
        ours, theirs = best[(fmt_name, "jackhost")], best[(fmt_name, "jack_capture")]
        top = " (the top of the ladder)" if ours == ladder[-1] else ""
        b.row(f"5e. Encoders in real time, {fmt_name}", "most channels, 0 drops, keeping up",
              f"{ours}{top}", "jack_capture: cannot write it" if theirs is None else f"jack_capture {theirs}",
              f"{ours / theirs:.2f}" if theirs else "n/a", "(info)", "-")
    b.details.append("\n".join(lines) + "\n")


def case_recording(b: Bench):
    rounds = 1 if b.quick else 3
    seconds = 1.0 if b.quick else 7.0
    period = 256
    expected = int(seconds * RATE)
    lines = ["### 5. Real-time recording, float WAV, 48 kHz, period 256\n",
             f"{rounds} round(s) of {seconds:g} s per channel count and peer, alternating; a run passes with zero "
             "dropped frames (jackhost: `silence inserted for D dropped frames` = 0 and no missing frames; jack_capture: "
             "no `overruns` and no missing frames). Full runs are longer than both rings (jackhost's recorder ring holds "
             "exactly 2.5 s; jack_capture starts at 4 s and grows), so a writer that cannot keep up "
             "must drop. Quick runs are shorter than the rings and cannot show that.\n",
             "| channels | peer | run | exit | frames in file | dropped | xruns | VmHWM MiB |", "|---|---|---|---|---|---|---|---|"]
    memory = {"jackhost": [], "jack_capture": []}
    zero_drop = {"jackhost": [], "jack_capture": []}
    for channels in (64, 256, 512):
        b.log(f"case 5: recording {channels} channels in real time")
        server = b.start_server(period, channels)
        ok = {"jackhost": True, "jack_capture": True}
        try:
            for r in range(rounds):
                for peer in b.alternate(r, ["jackhost", "jack_capture"]):
                    wav = b.work / f"rec-{peer}-{channels}.wav"
                    wav.unlink(missing_ok=True)
                    if peer == "jackhost":
                        cmd = b.jackhost("record", wav, "--overwrite", "-s", server[0], "-n", "jhb_rec", "-c", str(channels),
                                         "--duration", f"{seconds:g}", "--no-meter")
                        env = b.jackhost_env()
                    else:
                        cmd = ["jack_capture", "-c", str(channels), "-p", "system:capture*", "-d", f"{seconds:g}",
                               "-dc", "-ns", "-f", "wav", wav]
                        env = dict(b.env, JACK_DEFAULT_SERVER=server[0])
                    code, out, err, mem = run_sampled(b, cmd, env, seconds + 60, f"rec-{peer}-{channels}-{r}")
                    frames = sndfile_frames(wav) if wav.exists() else None
                    wav.unlink(missing_ok=True)
                    if peer == "jackhost":
                        m = re.search(r"silence inserted for (\d+) dropped frames; xruns (\d+)", out)
                        dropped, xruns = (int(m.group(1)), int(m.group(2))) if m else (None, None)
                    else:
                        m = re.search(r"total of (\d+) overruns", out + err)
                        dropped = int(m.group(1)) if m else 0
                        xruns = "-"
                    missing = expected - frames if frames is not None else None
                    good = code == 0 and dropped == 0 and missing == 0
                    ok[peer] = ok[peer] and good
                    if channels == 64 and mem:
                        memory[peer].append(mem)
                    lines.append(f"| {channels} | {peer} | {r + 1} | {code} | {frames} | {dropped} | {xruns} | "
                                 f"{mem['hwm'] / 1024:.0f} |" if mem else
                                 f"| {channels} | {peer} | {r + 1} | {code} | {frames} | {dropped} | {xruns} | n/a |")
        finally:
            b.stop_server(server)
        for peer in ok:
            zero_drop[peer].append((channels, ok[peer]))
    def best(peer):
        passed = [c for c, good in zero_drop[peer] if good]
        return max(passed) if passed else 0
    jh, jc = best("jackhost"), best("jack_capture")
    detail = ", ".join(f"{c}: {'ok' if g else 'DROPS'}" for c, g in zero_drop["jackhost"])
    detail_jc = ", ".join(f"{c}: {'ok' if g else 'DROPS'}" for c, g in zero_drop["jack_capture"])
    b.row("5. Real-time float WAV recording", "most channels with 0 drops", f"{jh} ({detail})",
          f"jack_capture {jc} ({detail_jc})", f"{jh / jc:.2f}" if jc else "n/a", "reach 512",
          "PASS" if jh >= 512 else "FAIL")
    b.details.append("\n".join(lines) + "\n")

    # Case 6: peak resident memory at 64 channels, from the same runs.
    lines = ["### 6. Peak resident memory, recording 64 channels\n",
             "VmHWM sampled every 50 ms during the 64-channel runs of case 5 (the last sample before exit), with "
             "the split of the resident set from /proc/PID/smaps_rollup and /proc/PID/status at that moment (MiB).\n",
             "| peer | VmHWM | Rss | anonymous | shared memory (JACK's shm) | file-backed |", "|---|---|---|---|---|---|"]
    for peer, samples in memory.items():
        for s in samples:
            lines.append(f"| {peer} | {s['hwm'] / 1024:.1f} | {s['rss'] / 1024:.1f} | {s['anon'] / 1024:.1f} | "
                         f"{s['shmem'] / 1024:.1f} | {s['file'] / 1024:.1f} |")
    hwm = {peer: b.median([s["hwm"] for s in samples]) for peer, samples in memory.items()}
    anon = {peer: b.median([s["anon"] for s in samples]) for peer, samples in memory.items()}
    if hwm["jackhost"] and hwm["jack_capture"]:
        ratio = hwm["jackhost"] / hwm["jack_capture"]
        b.row("6. Peak RSS, recording 64 ch", "VmHWM", f"{hwm['jackhost'] / 1024:.0f} MiB",
              f"jack_capture {hwm['jack_capture'] / 1024:.0f} MiB", f"{ratio:.2f}", "<= 1",
              "PASS" if ratio <= 1 else "FAIL")
        if anon["jackhost"] and anon["jack_capture"]:
            b.row("6. Peak RSS, recording 64 ch", "anonymous (own) memory", f"{anon['jackhost'] / 1024:.0f} MiB",
                  f"jack_capture {anon['jack_capture'] / 1024:.0f} MiB", f"{anon['jackhost'] / anon['jack_capture']:.2f}",
                  "(info)", "-")
    else:
        b.row("6. Peak RSS, recording 64 ch", "VmHWM", "n/a", "n/a", "n/a", "<= 1", "FAIL")
    b.details.append("\n".join(lines) + "\n")
    memory_breakdown(b)


def memory_breakdown(b: Bench):
    """Where jackhost's resident memory goes with 4 channels: /proc/PID/smaps grouped by mapping."""
    b.log("case 6: smaps breakdown, jackhost record with 4 channels")
    server = b.start_server(256, 4)
    try:
        wav = b.work / "smaps.wav"
        cmd = b.jackhost("record", wav, "--overwrite", "-s", server[0], "-n", "jhb_smaps", "-c", "4", "--duration", "2", "--no-meter")
        out = open(b.work / "smaps.out", "w")
        proc = b.procs.start(cmd, env=b.jackhost_env(), stdout=out, stderr=subprocess.STDOUT)
        groups = {}
        if b.wait_connected(server, "jhb_smaps:in_4", proc):
            time.sleep(1.0)
            try:
                smaps = Path(f"/proc/{proc.pid}/smaps").read_text()
            except OSError:
                smaps = ""
            current = None
            for line in smaps.splitlines():
                if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                    parts = line.split(None, 5)
                    path = parts[5] if len(parts) > 5 else "[anonymous]"
                    if path.startswith("/dev/shm/jack"):
                        path = "/dev/shm/jack-* (JACK server shm: port buffers, graph)"
                    elif ".so" in path:
                        path = "shared libraries (" + ("Swift runtime/Foundation" if "/opt/swift" in path or "swift" in path
                                                       else "system") + ")"
                    current = path
                elif line.startswith("Rss:") and current:
                    groups[current] = groups.get(current, 0) + int(line.split()[1])
        b.procs.wait(proc, 30)
        out.close()
        wav.unlink(missing_ok=True)
    finally:
        b.stop_server(server)
    total = sum(groups.values())
    lines = ["#### Where jackhost's memory goes (record, 4 channels)\n",
             f"`/proc/PID/smaps` of `jackhost record -c 4` one second into the run, Rss summed per mapping "
             f"(total {total / 1024:.1f} MiB):\n", "| mapping | Rss MiB |", "|---|---|"]
    for path, kib in sorted(groups.items(), key=lambda kv: -kv[1])[:8]:
        lines.append(f"| {path} | {kib / 1024:.1f} |")
    b.details.append("\n".join(lines) + "\n")


# ----------------------------------------------------------------------------------------
# Case 5b: freewheel recording throughput

def case_freewheel_recording(b: Bench):
    rounds = b.args.rounds
    channels, period = 16, 1024
    # jack_capture 0.9.73 segfaults in a fair share of freewheel runs, more often the longer they are.
    lengths = (10.0, 90.0) if not b.quick else (10.0, 60.0)
    rounds = 1 if b.quick else rounds
    b.log(f"case 5b: freewheel recording, {channels} channels x {period}")
    spec = (period, channels)
    rates = {"jackhost": [], "jack_capture": []}
    ratios = []
    try:
        for r in range(rounds):
            measured = {}
            for peer in b.alternate(r, ["jackhost", "jack_capture"]):
                times = []
                for seconds in lengths:
                    wav = b.shm / f"fwrec-{peer}.wav"
                    wav.unlink(missing_ok=True)

                    def make_cmd(srv, peer=peer, seconds=seconds, wav=wav):
                        if peer == "jackhost":
                            return (b.jackhost("record", wav, "--overwrite", "-s", srv[0], "-n", "jhb_fwrec", "-c", str(channels),
                                               "--duration", f"{seconds:g}", "--no-meter"), b.jackhost_env())
                        return (["jack_capture", "-c", str(channels), "-p", "system:capture*", "-d", f"{seconds:g}",
                                 "-dc", "-ns", "-f", "wav", wav], dict(b.env, JACK_DEFAULT_SERVER=srv[0]))
                    port = f"jhb_fwrec:in_{channels}" if peer == "jackhost" else JACK_CAPTURE_LAST_PORT.format(channels)
                    t = freewheel_run(b, spec, make_cmd, port, f"fwrec-{peer}")
                    frames = sndfile_frames(wav) if wav.exists() else None
                    wav.unlink(missing_ok=True)
                    if frames != int(seconds * RATE):
                        b.log(f"  5b {peer}: {frames} frames in the file, expected {int(seconds * RATE)}")
                        t = None
                    times.append(t)
                if None in times or times[1] <= times[0]:
                    measured[peer] = None
                else:
                    measured[peer] = (lengths[1] - lengths[0]) * RATE / (times[1] - times[0])
                rates[peer].append(measured[peer])
            if measured["jackhost"] and measured["jack_capture"]:
                ratios.append(measured["jackhost"] / measured["jack_capture"])
    finally:
        pass
    ratio = b.median(ratios)
    b.row(f"5b. Freewheel recording, {channels} ch x {period}", "frames/s vs jack_capture",
          fmt(b.median(rates["jackhost"])), "jack_capture " + fmt(b.median(rates["jack_capture"])),
          f"{ratio:.2f}" if ratio else "n/a", "> 1",
          "PASS" if ratio and ratio > 1 else "FAIL" if ratio else "n/a (runs too short to resolve)")
    b.details.append("### 5b. Freewheel recording throughput\n\n"
                     f"Float WAV to tmpfs, {channels} channels, period {period}; every file must hold exactly the frames "
                     "asked for (jackhost applies backpressure while freewheeling; jack_capture grows its buffer). "
                     f"Rate = (frames_long - frames_short) / (t_long - t_short), lengths {lengths[0]:g}/{lengths[1]:g} "
                     f"audio seconds, {rounds} rounds. Crashed runs (retried): "
                     f"{', '.join(f'{k} {v}' for k, v in b.crashes.items()) or 'none'}.\n\n"
                     "| peer | frames/s per round | median |\n|---|---|---|\n" +
                     "".join(f"| {peer} | " + ", ".join(fmt(v) for v in vals) + f" | {fmt(b.median(vals))} |\n"
                             for peer, vals in rates.items()))


# ----------------------------------------------------------------------------------------
# Case 7: allocations and locks on the real-time thread (RealtimeSanitizer)


def case_sync(b: Bench):
    """What the durability policy costs: freewheel recording to the disk with fdatasync every
    2 s of audio (the default) against no syncing at all."""
    channels, period = 16, 1024
    lengths = (10.0, 60.0)
    rounds = 1 if b.quick else 3
    b.log(f"case 5d: cost of --sync-interval, {channels} channels x {period}, to disk")
    spec = (period, channels)
    peers = {"sync 2 s": "2", "no sync": "0"}
    rates = {peer: [] for peer in peers}
    ratios = []
    for r in range(rounds):
        measured = {}
        for peer in b.alternate(r, list(peers)):
            times = []
            for seconds in lengths:
                wav = b.work / f"sync-{peers[peer]}.wav"
                wav.unlink(missing_ok=True)

                def make_cmd(srv, seconds=seconds, wav=wav, interval=peers[peer]):
                    return (b.jackhost("record", wav, "--overwrite", "-s", srv[0], "-n", "jhb_sync", "-c", str(channels),
                                       "--duration", f"{seconds:g}", "--no-meter", "--sync-interval", interval), b.jackhost_env())
                t = freewheel_run(b, spec, make_cmd, f"jhb_sync:in_{channels}", f"sync-{peers[peer]}")
                frames = sndfile_frames(wav) if wav.exists() else None
                wav.unlink(missing_ok=True)
                times.append(t if frames == int(seconds * RATE) else None)
            ok = None not in times and times[1] > times[0]
            measured[peer] = (lengths[1] - lengths[0]) * RATE / (times[1] - times[0]) if ok else None
            rates[peer].append(measured[peer])
        if measured["sync 2 s"] and measured["no sync"]:
            ratios.append(measured["sync 2 s"] / measured["no sync"])
    ratio = b.median(ratios)
    b.row(f"5d. Durability, {channels} ch x {period}, freewheel to disk", "frames/s, sync every 2 s vs none",
          fmt(b.median(rates["sync 2 s"])), "no sync " + fmt(b.median(rates["no sync"])),
          f"{ratio:.2f}" if ratio else "n/a", "(info)", "-")
    b.details.append("### 5d. What syncing costs\n\n"
                     f"Float WAV to the work folder's disk, {channels} channels, period {period}, in freewheel (faster "
                     "than real time, so the cost shows); `--sync-interval 2` (the default: fdatasync every 2 s of audio "
                     "on the writer thread) against `--sync-interval 0`. "
                     f"Rate = (frames_long - frames_short) / (t_long - t_short), {rounds} round(s).\n\n"
                     "| setting | frames/s per round | median |\n|---|---|---|\n" +
                     "".join(f"| {peer} | " + ", ".join(fmt(v) for v in vals) + f" | {fmt(b.median(vals))} |\n"
                             for peer, vals in rates.items()))


def case_stall(b: Bench):
    """A disk that blocks one write for many seconds, for jackhost and jack_capture alike."""
    lines = ["### 5c. A stalling disk: frames each recorder lost\n",
             "Real-time recording at 48 kHz with 64-frame periods; `stall_write_shim.so` makes the first write to the "
             "take, after its first megabyte, block for the given time. jackhost runs with its defaults (a 0.5 s "
             "real-time ring and an elastic buffer of up to 512 MiB); jack_capture with its defaults (a 4 s buffer "
             "that grows to 40 s). Lost = frames the recorder reported dropping (jackhost writes silence for them) "
             "plus frames missing from the file.\n",
             "| channels | stall | peer | exit | frames in file | expected | lost |", "|---|---|---|---|---|---|---|"]
    configurations = [(2, 5, 9)] if b.quick else [(2, 30, 36), (2, 60, 66), (64, 10, 14)]
    for channels, stall, seconds in configurations:
        b.log(f"case 5c: {channels} channels through a {stall} s write stall")
        server = b.start_server(64, channels)
        expected = seconds * RATE
        lost = {}
        try:
            for peer in ["jackhost", "jack_capture"]:
                wav = b.work / f"stall-{peer}-{channels}-{stall}.wav"
                wav.unlink(missing_ok=True)
                stall_env = {"STALL_PATH": wav.name, "STALL_AFTER_BYTES": "1000000", "STALL_SECONDS": str(stall)}
                if peer == "jackhost":
                    cmd = b.jackhost("record", wav, "-s", server[0], "-n", "jhb_stall", "-c", str(channels),
                                     "--duration", str(seconds), "--no-meter")
                    env = dict(b.jackhost_env(), **stall_env)
                    env["LD_PRELOAD"] = env["LD_PRELOAD"] + ":" + b.args.stall_shim
                else:
                    cmd = ["jack_capture", "-c", str(channels), "-p", "system:capture*", "-d", str(seconds),
                           "-dc", "-ns", "-f", "wav", wav]
                    env = dict(b.env, JACK_DEFAULT_SERVER=server[0], LD_PRELOAD=b.args.stall_shim, **stall_env)
                code, out, err = b.run_client(cmd, env, seconds + stall + 90, f"stall-{peer}-{channels}-{stall}")
                frames = sndfile_frames(wav) if wav.exists() else 0
                wav.unlink(missing_ok=True)
                if peer == "jackhost":
                    m = re.search(r"silence inserted for (\d+) dropped frames", out)
                    reported = int(m.group(1)) if m else expected
                else:
                    m = re.search(r"total of (\d+) overruns", out + err)
                    reported = int(m.group(1)) if m else 0
                lost[peer] = reported + max(0, expected - (frames or 0))
                lines.append(f"| {channels} | {stall} s | {peer} | {code} | {frames} | {expected} | {lost[peer]} |")
        finally:
            b.stop_server(server)
        verdict = "PASS" if lost.get("jackhost", 1) == 0 and lost.get("jackhost", 1) <= lost.get("jack_capture", 0) else "FAIL"
        b.row(f"5c. Stalling disk, {channels} ch, {stall} s", "frames lost", str(lost.get("jackhost")),
              "jack_capture " + str(lost.get("jack_capture")), "-", "jackhost 0, never more than jack_capture", verdict)
    b.details.append("\n".join(lines) + "\n")

# ----------------------------------------------------------------------------------------
# Case 8: what plugin isolation costs per cycle (issue 14): a recording beside the CPeak
# example plugin in jackhost's process, against the same plugin in its own process

def process_tree(root):
    """root and every live descendant, from the ppid field of /proc/*/stat."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        parents.setdefault(int(text.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    tree, pending = [], [root]
    while pending:
        pid = pending.pop()
        tree.append(pid)
        pending += parents.get(pid, [])
    return tree


def process_usage(pid):
    """(user+sys ticks of the process, user+sys ticks of its reaped children, context switches of its
    live threads (voluntary and involuntary), nanoseconds on a CPU of its live threads from
    /proc/PID/task/TID/schedstat), or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        switches = 0
        runtime = 0
        for task in Path(f"/proc/{pid}/task").iterdir():
            for line in (task / "status").read_text().splitlines():
                if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                    switches += int(line.split()[1])
            try:
                runtime += int((task / "schedstat").read_text().split()[0])
            except (OSError, IndexError, ValueError):
                pass
    except OSError:
        return None
    # fields[0] is the state (field 3 of stat): utime, stime, cutime, cstime are fields 14-17.
    return int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]), switches, runtime


def tree_usage(root):
    """{pid: process_usage} over root's process tree, and the time it was taken."""
    usage = {}
    for pid in process_tree(root):
        sample = process_usage(pid)
        if sample is not None:
            usage[pid] = sample
    return usage, time.monotonic()


def usage_delta(first, second, root):
    """CPU seconds and context switches of root's tree between two tree_usage samples. A process
    that appeared in between counts from its start; one that was reaped in between shows up in
    root's children's time (and the delta is flagged: it then also counts the time before `first`)."""
    (a, ta), (z, tz) = first, second
    hz = os.sysconf("SC_CLK_TCK")
    none = (0, 0, 0, 0)
    ticks = sum(z[pid][0] - a.get(pid, none)[0] for pid in z)
    ticks += z[root][1] - a[root][1] if root in a and root in z else 0
    switches = sum(z[pid][2] - a.get(pid, none)[2] for pid in z)
    runtime = sum(z[pid][3] - a.get(pid, none)[3] for pid in z)
    return ticks / hz, switches, tz - ta, set(a) != set(z), len(z), runtime / 1e9


def case_isolation(b: Bench):
    if not b.args.cpeak:
        b.row("8. Plugin isolation", "cost per cycle", "libCPeak.so not built", "-", "-", "(info)", "FAIL")
        return
    period = 256
    cycle_us = period / RATE * 1e6
    # (channels, seconds per run, rounds): every subject runs once per round, the order reversed every other round.
    plan = [(64, 4, 1), (8, 4, 1), (2, 4, 1)] if b.quick else [(64, 25, 2), (8, 20, 2), (2, 20, 2)]
    warm = 1.5 if b.quick else 5.0   # the window starts after start-up (the child, the connections) ...
    tail = 1.0                       # ... and ends before the take's own end
    subjects = {
        "record only": [],
        "in-process": ["--plugin-isolation", "none"],
        "isolated": ["--plugin-isolation", "process"],
        # What any second JACK client costs in jack2: record only, beside cmeter (a minimal C
        # client) on the same sources; its CPU is counted with jackhost's.
        "record + C client": [],
    }
    lines = ["### 8. Plugin isolation: cost per cycle\n",
             "`jackhost run --record take.wav` beside the CPeak example plugin (C, real-time: a peak and clip count "
             "per channel in the process callback), with `--plugin-isolation none` (the plugin in jackhost's own "
             "process and callback) against `--plugin-isolation process` (jackhost spawns a child `jackhost run "
             "--plugin ... --plugin-isolation none --supervisor-fd 3`, its own JACK client on the same sources), and "
             "`--record` alone as the baseline, and `--record` beside cmeter (a minimal C client metering the same "
             "sources, its CPU added to jackhost's): what a second JACK client costs in jack2 whatever it is, the "
             "floor under isolation's cost. A `jackd -R` dummy server (SCHED_FIFO priority 10; the clients' "
             "process threads, the isolated child's included, run SCHED_FIFO at 5), 48 kHz, "
             f"{period}-frame periods, fed by `jackhost signal --kind sequence`; subjects alternate, the order "
             "reversed every other round.\n",
             f"CPU = user+sys from /proc/PID/stat, summed over jackhost and every descendant (the isolated "
             f"plugin's child), sampled {warm:g} s after the start and {tail:g} s before the end of the take, so "
             "start-up and teardown are left out; per cycle = CPU / (window x 48000 / 256). /proc/PID/stat counts in "
             "10 ms ticks (about 3 us per cycle over a 19 s window); the schedstat column is the same window from "
             "/proc/PID/task/TID/schedstat (nanoseconds on a CPU, live threads only), as a cross-check. Context switches: "
             "voluntary + involuntary over every thread of those processes, per second of the window. jackd's own CPU "
             "over the same window is shown apart: a second client makes the server wake one more process each "
             "cycle (from its schedstat). Whole run = wait4() user+sys of jackhost including its reaped children (start-up included) per "
             "cycle of the take. DSP load: jack2's `jack_cpu_load`, read by an inactive client and averaged over the "
             "window. A run counts only if it exited 0, its take holds exactly duration x 48000 frames with no "
             "dropped frames, and the plugin wrote its per-channel report.\n",
             "| channels | round | subject | exit | frames in file | dropped | xruns | processes | CPU us/cycle | "
             "schedstat us/cycle | jackd us/cycle | whole run us/cycle | switches/s | DSP load % |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    try:
        import jack  # noqa: F401  (the Python JACK client: only for jack_cpu_load)
    except ImportError:
        jack = None
    for channels, seconds, rounds in plan:
        b.log(f"case 8: isolation cost, {channels} channels, {rounds} round(s) of {seconds} s per subject")
        expected = seconds * RATE
        server = b.start_server(period, 2, realtime=True)
        generator = None
        loader = None
        per_cycle = {name: [] for name in subjects}
        per_cycle_precise = {name: [] for name in subjects}
        jackd_cycle = {name: [] for name in subjects}
        switches = {name: [] for name in subjects}
        good_runs = {name: 0 for name in subjects}
        xrun_counts = {name: [] for name in subjects}
        dsp_loads = {name: [] for name in subjects}
        gen_log = None
        try:
            gen_log = open(b.work / f"iso-gen-{channels}.log", "w")
            generator = b.procs.start(b.jackhost("signal", "-s", server[0], "-n", "jhb_isogen", "-c", str(channels),
                                                 "--kind", "sequence"), env=b.env, stdout=gen_log, stderr=subprocess.STDOUT)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and generator.poll() is None:
                ports = subprocess.run(["jack_lsp", "-s", server[0], f"jhb_isogen:out_{channels}"], env=b.env,
                                       capture_output=True, text=True).stdout
                if f"jhb_isogen:out_{channels}" in ports:
                    break
                time.sleep(0.05)
            else:
                raise RuntimeError("the generator did not come up")
            if jack is not None:
                try:
                    loader = jack.Client("jhb_isoload", servername=server[0], no_start_server=True)
                except Exception as error:  # DSP load is supporting data only
                    b.log(f"case 8: no DSP load ({error!r})")
            for r in range(rounds):
                for name in b.alternate(r, list(subjects)):
                    tag = f"iso-{channels}-{name.split()[0]}-{r}"
                    wav = b.work / f"{tag}.wav"
                    report = b.work / f"{tag}.cpeak"
                    wav.unlink(missing_ok=True)
                    report.unlink(missing_ok=True)
                    cmd = b.jackhost("run", "--record", wav, "--overwrite", "-s", server[0], "-n", "jhb_iso",
                                     "-c", str(channels), "--connect", "jhb_isogen:out_.*", "--duration", str(seconds))
                    if subjects[name]:
                        cmd += subjects[name] + ["--plugin", f"{b.args.cpeak}:output={report}"]
                    out_path, err_path = b.work / f"{tag}.out", b.work / f"{tag}.err"
                    second_client = None
                    if name == "record + C client":
                        second_client = b.procs.start([b.args.cmeter, "-s", server[0], "-n", "jhb_iso2", "-c", str(channels),
                                                       "--source-prefix", "jhb_isogen:out_"], env=b.env,
                                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                        b.wait_connected(server, "jhb_iso2:in_1", second_client)
                    with open(out_path, "w") as out, open(err_path, "w") as err:
                        proc = b.procs.start(cmd, env=b.jackhost_env(), stdout=out, stderr=err)
                        started = time.monotonic()
                        first = second = jackd_first = jackd_second = None
                        client_first = client_second = None
                        loads = []
                        # wait4, not poll(): its rusage holds jackhost's CPU with its reaped children's.
                        reaped = 0
                        while time.monotonic() < started + seconds + 60:
                            reaped, status, rusage = os.wait4(proc.pid, os.WNOHANG)
                            if reaped:
                                break
                            now = time.monotonic() - started
                            if first is None and now >= warm:
                                first, jackd_first = tree_usage(proc.pid), process_usage(server[1].pid)
                                client_first = tree_usage(second_client.pid) if second_client else None
                            elif first is not None and second is None and now >= seconds - tail:
                                second, jackd_second = tree_usage(proc.pid), process_usage(server[1].pid)
                                client_second = tree_usage(second_client.pid) if second_client else None
                            elif first is not None and second is None and loader is not None:
                                try:
                                    loads.append(loader.cpu_load())
                                except Exception:
                                    pass
                            time.sleep(0.1 if first is None or second is not None else 0.25)
                        if not reaped:
                            proc.kill()
                            _, status, rusage = os.wait4(proc.pid, 0)
                        proc.returncode = os.waitstatus_to_exitcode(status)
                        b.procs.reaped(proc)
                    if second_client is not None:
                        b.procs.stop(second_client, grace=5.0)
                    code = proc.returncode
                    text = out_path.read_text(errors="replace")
                    frames = sndfile_frames(wav) if wav.exists() else None
                    wav.unlink(missing_ok=True)
                    m = re.search(r"silence inserted for (\d+) dropped frames; xruns (\d+)", text)
                    dropped, xruns = (int(m.group(1)), int(m.group(2))) if m else (None, None)
                    plugin_ok = True
                    if subjects[name]:
                        plugin_ok = report.exists() and len(re.findall(r"^peak in_", report.read_text(errors="replace"),
                                                                        re.M)) == channels
                    good = code == 0 and frames == expected and dropped == 0 and plugin_ok
                    cpu = precise = jd = sw = load = None
                    processes = "-"
                    if first and second and good:
                        seconds_cpu, count, window, changed, processes, runtime = usage_delta(first, second, proc.pid)
                        if client_first and client_second and second_client:
                            extra = usage_delta(client_first, client_second, second_client.pid)
                            seconds_cpu, count, runtime = seconds_cpu + extra[0], count + extra[1], runtime + extra[5]
                            processes += extra[4]
                        cycles = window * RATE / period
                        cpu = seconds_cpu * 1e6 / cycles
                        precise = runtime * 1e6 / cycles
                        sw = count / window
                        if jackd_first and jackd_second:
                            jd = (jackd_second[3] - jackd_first[3]) / 1e9 * 1e6 / cycles
                        if changed:
                            processes = f"{processes} (changed)"
                        load = statistics.mean(loads) if loads else None
                        per_cycle[name].append(cpu)
                        per_cycle_precise[name].append(precise)
                        jackd_cycle[name].append(jd)
                        switches[name].append(sw)
                        dsp_loads[name].append(load)
                        good_runs[name] += 1
                    xrun_counts[name].append(xruns)
                    whole = (rusage.ru_utime + rusage.ru_stime) * 1e6 / (expected / period)
                    lines.append(f"| {channels} | {r + 1} | {name} | {code} | {frames} | {dropped} | {xruns} | "
                                 f"{processes} | {fmt(cpu)} | {fmt(precise)} | {fmt(jd)} | {fmt(whole)} | {fmt(sw)} | "
                                 f"{fmt(load)} |" +
                                 ("" if good else f" **not counted: {'no plugin report' if not plugin_ok else 'bad take'}**"))
                    report.unlink(missing_ok=True)
        finally:
            if loader is not None:
                try:
                    loader.close()
                except Exception:
                    pass
            if generator is not None:
                b.procs.stop(generator, grace=5.0)
            if gen_log is not None:
                gen_log.close()
            b.stop_server(server)
        median = {name: b.median(values) for name, values in per_cycle.items()}
        median_sw = {name: b.median(values) for name, values in switches.items()}
        median_precise = {name: b.median(values) for name, values in per_cycle_precise.items()}
        median_jd = {name: b.median(values) for name, values in jackd_cycle.items()}
        median_load = {name: b.median(values) for name, values in dsp_loads.items()}
        complete = all(good_runs[name] == rounds for name in subjects)
        verdict = "-" if complete else "FAIL"
        case = f"8. Plugin isolation, {channels} ch x {period}, record + CPeak"

        def ratio(x, y):
            return f"{x / y:.2f}" if x and y else "n/a"
        b.row(case, "CPU per cycle (jackhost + child), isolated vs in-process",
              f"isolated {fmt(median['isolated'])} us", f"in-process {fmt(median['in-process'])} us",
              ratio(median["isolated"], median["in-process"]), "(info)", verdict)
        b.row(case, "the same from schedstat (ns, cross-check), isolated vs in-process",
              f"isolated {fmt(median_precise['isolated'])} us", f"in-process {fmt(median_precise['in-process'])} us",
              ratio(median_precise["isolated"], median_precise["in-process"]), "(info)", verdict)
        b.row(case, "CPU per cycle, in-process plugin vs record only",
              f"in-process {fmt(median['in-process'])} us", f"record only {fmt(median['record only'])} us",
              ratio(median["in-process"], median["record only"]), "(info)", verdict)
        b.row(case, "CPU per cycle, isolated plugin vs record only",
              f"isolated {fmt(median['isolated'])} us", f"record only {fmt(median['record only'])} us",
              ratio(median["isolated"], median["record only"]), "(info)", verdict)
        if median["record + C client"] and median["record only"] and median["isolated"] and median["in-process"]:
            floor = median["record + C client"] - median["record only"]
            cost = median["isolated"] - median["in-process"]
            b.row(case, "isolation's extra CPU per cycle vs a second C client's (the floor in jack2)",
                  f"isolated - in-process {fmt(cost)} us", f"cmeter beside record only +{fmt(floor)} us",
                  ratio(cost, floor), "(info)", verdict)
        b.row(case, "context switches/s (jackhost + child), isolated vs in-process",
              f"isolated {fmt(median_sw['isolated'])}", f"in-process {fmt(median_sw['in-process'])}",
              ratio(median_sw["isolated"], median_sw["in-process"]), "(info)", verdict)
        if median_jd["isolated"] and median_jd["in-process"]:
            b.row(case, "jackd CPU per cycle, isolated vs in-process",
                  f"isolated {fmt(median_jd['isolated'])} us", f"in-process {fmt(median_jd['in-process'])} us",
                  ratio(median_jd["isolated"], median_jd["in-process"]), "(info)", verdict)
            # The whole machine's share: jackhost, its child and the server, all from schedstat.
            total = {name: (median_precise[name] + median_jd[name]) if median_precise[name] and median_jd[name] else None
                     for name in subjects}
            b.row(case, "jackhost + child + jackd (schedstat), isolated vs in-process",
                  f"isolated {fmt(total['isolated'])} us", f"in-process {fmt(total['in-process'])} us",
                  ratio(total["isolated"], total["in-process"]), "(info)", verdict)
        b.row(case, "xruns, all runs (recording's count)",
              "isolated " + "+".join(str(x) for x in xrun_counts["isolated"]),
              "in-process " + "+".join(str(x) for x in xrun_counts["in-process"]) + "; record only " +
              "+".join(str(x) for x in xrun_counts["record only"]), "-", "(info)", verdict)
        lines.append("")
        lines.append(f"{channels} channels, medians (period {cycle_us:.0f} us): record only "
                     f"{fmt(median['record only'])} us/cycle, in-process {fmt(median['in-process'])}, isolated "
                     f"{fmt(median['isolated'])}; isolated / in-process = {ratio(median['isolated'], median['in-process'])}, "
                     f"(isolated - in-process) = {fmt(median['isolated'] - median['in-process']) if median['isolated'] and median['in-process'] else 'n/a'} "
                     f"us per cycle. DSP load (median %): record only {fmt(median_load['record only'])}, in-process "
                     f"{fmt(median_load['in-process'])}, isolated {fmt(median_load['isolated'])}.\n")
    b.details.append("\n".join(lines) + "\n")


def case_rtsan(b: Bench):
    if not b.args.jackhost_rtsan:
        b.row("7. RT-thread allocations/locks (RTSan)", "reports", "not built", "-", "-", "0", "FAIL")
        return
    seconds = 1.5 if b.quick else 5.0
    b.log("case 7: RealtimeSanitizer, meter + recorder + stream")
    server = b.start_server(64, 64)
    env = dict(b.env, RTSAN_OPTIONS="halt_on_error=false")
    results = {}
    try:
        wav = b.work / "rtsan.wav"
        runs = [
            ("jackhost (RTSan build)", [b.args.jackhost_rtsan, "run", "--meter", "--record", wav, "--overwrite", "--stream", "-o",
                                        "/dev/null", "-s", server[0], "-n", "jhb_rtsan", "-c", "64",
                                        "--duration", f"{seconds:g}"], dict(env, LD_PRELOAD=b.args.close_shim)),
            ("cmeter (RTSan)", [b.args.cmeter_rtsan, "-s", server[0], "-n", "jhb_crtsan", "-c", "64",
                                "--frames", str(int(seconds * RATE))], env),
            ("cmeter --rt-malloc (positive control)", [b.args.cmeter_rtsan, "-s", server[0], "-n", "jhb_crtsan2", "-c",
                                                       "64", "--frames", str(int(RATE)), "--rt-malloc"], env),
        ]
        for label, cmd, run_env in runs:
            code, out, err = b.run_client(cmd, run_env, seconds + 60, "rtsan-" + label.split()[0] + str(len(results)))
            reports = len(re.findall(r"ERROR: RealtimeSanitizer", err))
            functions = sorted(set(re.findall(r"unsafe function `?([A-Za-z0-9_]+)`?", err)))
            cycles = None
            if "cmeter" in label:
                m = re.search(r"cycles=(\d+)", out)
                cycles = int(m.group(1)) if m else None
            results[label] = (code, reports, functions, cycles)
        wav.unlink(missing_ok=True)
    finally:
        b.stop_server(server)
    jh = results["jackhost (RTSan build)"]
    control = results["cmeter --rt-malloc (positive control)"]
    live = control[1] > 0
    b.row("7. RT-thread allocations/locks (RTSan)", "sanitizer reports",
          f"{jh[1]} (exit {jh[0]})", f"C {results['cmeter (RTSan)'][1]}; control {control[1]}",
          "-", "0", "PASS" if jh[0] == 0 and jh[1] == 0 and live else "FAIL")
    b.details.append("### 7. Allocations and locks on the real-time thread\n\n"
                     f"jackhost built with LLVM RealtimeSanitizer linked (`.build-bench-rtsan`), {seconds:g} s of "
                     "`run --meter --record F --stream -o /dev/null` at 64 x 64, `RTSAN_OPTIONS=halt_on_error=false` so "
                     "every violation is reported. The positive control (cmeter mallocs in its callback) shows that "
                     "the sanitizer is live in this setup; a count of 0 means nothing was intercepted.\n\n"
                     "| run | exit | reports | functions reported |\n|---|---|---|---|\n" +
                     "".join(f"| {label} | {v[0]} | {v[1]} | {', '.join(v[2]) or '-'} |\n" for label, v in results.items()))


# ----------------------------------------------------------------------------------------
# Report

def machine():
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = ""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    return {"nproc": os.cpu_count(), "cpu": cpu, "memory": mem, "kernel": platform.release()}


def versions():
    def first(cmd):
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
            text = (out.stdout + out.stderr).strip().splitlines()
            return text[0] if text else "?"
        except OSError:
            return "?"
    jackd = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "jackd2"], capture_output=True, text=True).stdout
    jc = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "jack-capture"], capture_output=True, text=True).stdout
    try:
        import jack, numpy  # noqa: E401
        py = f"JACK-Client {jack.__version__}, numpy {numpy.__version__}"
    except ImportError:
        py = "not installed"
    return {"swift": first(["swift", "--version"]), "jackd2": jackd, "jack-capture": jc, "python": py,
            "gcc": first(["gcc", "--version"])}


def write_report(b: Bench, path: Path, elapsed):
    m = machine()
    v = versions()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=b.args.root).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True,
                           cwd=b.args.root).stdout.strip()
    command = "scripts/bench --quick" if b.quick else "scripts/bench"
    table = ["| case | measure | jackhost | peer (same run) | ratio | target | result |", "|---|---|---|---|---|---|---|"]
    table += ["| " + " | ".join(str(c) for c in row) + " |" for row in b.rows]
    passed = sum(1 for r in b.rows if r[6] == "PASS")
    failed = sum(1 for r in b.rows if r[6] == "FAIL")
    text = [
        "# Benchmarks\n",
        "Generated by `scripts/bench`; do not edit by hand (the findings section comes from "
        "`Benchmarks/FINDINGS.md`).\n",
        f"- Reproduce: `{command}` from the repository root (a full run takes about half an hour; `--quick` a few minutes, "
        "fewer rounds and shorter runs, for checking that everything works).",
        f"- Date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; "
        f"run took {elapsed:.0f} s; mode: {'quick' if b.quick else 'full'}, {b.args.rounds} rounds.",
        f"- Machine: {m['nproc']} cores ({m['cpu']}), {m['memory']}, Linux {m['kernel']}; shared and noisy, "
        "jackd runs `-R` (SCHED_FIFO) for cases 2, 2b, 2c, 5e and 8 and `--no-realtime` for the others.",
        f"- Code: commit {commit}{' with local changes' if dirty else ''}; jackhost built with "
        "`swift build -c release --scratch-path .build-bench`.",
        f"- Tools: {v['swift']}; jackd2 {v['jackd2']}; jack-capture {v['jack-capture']}; {v['python']}; {v['gcc']}.\n",
        "Every figure is a ratio against a peer measured in the same run, alternating A B / B A each round; "
        "the table shows medians over the rounds. Absolute numbers are supporting data only: they depend on "
        "this machine and on what else it was running.\n",
        ("**Quick mode: a smoke test, not a result.** One round for the freewheel cases (1, 5b), three "
         "for the others, and runs too short for the differencing to be precise: freewheel ratios can be off "
         "by a factor of two or more. Use the full run's figures.\n" if b.quick else ""),
        f"**{passed} PASS, {failed} FAIL.**\n",
        *table,
        "\n## Details\n",
        *b.details,
    ]
    findings = Path(b.args.root) / "Benchmarks" / "FINDINGS.md"
    if findings.exists():
        text.append("\n" + findings.read_text())
    path.write_text("\n".join(text))
    return table


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated: exit,freewheel,callback,rtcpu,profile,kernels,recording,encoders,stall,sync,fwrec,rtsan,isolation")
    parser.add_argument("--root", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--pidfile", required=True)
    parser.add_argument("--server-prefix", required=True, help="every jackd started is named PREFIX<n>")
    parser.add_argument("--shm", required=True, help="a folder on tmpfs for the freewheel recordings")
    parser.add_argument("--output", required=True)
    parser.add_argument("--jackhost", required=True)
    parser.add_argument("--jackhost-rtsan", default="")
    parser.add_argument("--cmeter", required=True)
    parser.add_argument("--cmeter-rtsan", default="")
    parser.add_argument("--cfair", required=True, help="cfair, the C peer doing jackhost's real-time work, for case 2")
    parser.add_argument("--pymeter", required=True)
    parser.add_argument("--kernel-bench", required=True)
    parser.add_argument("--close-shim", required=True)
    parser.add_argument("--stall-shim", required=True, help="stall_write_shim.so, for case 5c's stalling disk")
    parser.add_argument("--cycle-shim", required=True, help="cycle_clock_shim.so, for case 1's steady-state rate")
    parser.add_argument("--cpeak", default="", help="libCPeak.so (scripts/build-examples), for case 8's plugin")
    parser.add_argument("--check-ratio", type=float, default=None,
                        help="exit 1 when case 2's callback p99 is over this many times the fair C peer's (or not measured)")
    args = parser.parse_args()
    Path(args.shm).mkdir(parents=True, exist_ok=True)
    args.rounds = 3 if args.quick else 5
    b = Bench(args)
    cases = [("exit", case_exit), ("freewheel", case_freewheel), ("callback", case_callback), ("rtcpu", case_rtcpu), ("profile", case_profile), ("kernels", case_kernels),
             ("recording", case_recording), ("encoders", case_encoders), ("stall", case_stall), ("sync", case_sync), ("fwrec", case_freewheel_recording), ("rtsan", case_rtsan),
             ("isolation", case_isolation)]
    only = set(filter(None, args.only.split(",")))
    for name, function in cases:
        if only and name not in only:
            continue
        try:
            function(b)
        except Exception as error:  # report the case as failed and go on with the others
            b.log(f"case {name} failed: {error!r}")
            b.row(f"{name}", "error", repr(error)[:80], "-", "-", "-", "FAIL")
    if b.freewheel_times:
        b.details.append("### Raw freewheel runs\n\nSeconds from `jack_freewheel y` to the client's exit, every run in "
                         "order (the inputs to the rates above).\n\n" +
                         "".join(f"- {tag}: {seconds:.3f} s (`{' '.join(Path(str(c)).name if i == 0 else str(c) for i, c in enumerate(cmd))}`)\n"
                                 for tag, cmd, seconds in b.freewheel_times))
    elapsed = time.monotonic() - b.started
    table = write_report(b, Path(args.output), elapsed)
    print("\n".join(table))
    print(f"\nbench: wrote {args.output} ({elapsed:.0f} s)")
    if args.check_ratio is not None:
        ratio = b.callback_fair_ratio
        if ratio is None:
            print(f"bench: --check-ratio {args.check_ratio:g}: case 2's callback p99 against the fair C peer was not "
                  "measured (run the callback case)", file=sys.stderr)
            sys.exit(1)
        verdict = "within" if ratio <= args.check_ratio else "over"
        print(f"bench: --check-ratio {args.check_ratio:g}: jackhost's callback p99 is {ratio:.2f} x the fair C peer's, "
              f"{verdict} the limit", file=sys.stderr)
        if ratio > args.check_ratio:
            sys.exit(1)


if __name__ == "__main__":
    main()
